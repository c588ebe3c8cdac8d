package main

// This command is cmd/steady's sources (the other files here are links to
// them) plus this file, which adds the Redis store to --shared-quota: the
// core module never imports a satellite, so the build that can share a
// quota through Redis lives here (ADR 202). When cmd/steady gains or loses
// a source file, refresh the links with: go -C redisquota generate ./cmd/steady

//go:generate sh -c "find . -maxdepth 1 -type l -name '*.go' -delete && for f in ../../../cmd/steady/*.go; do case ${DOLLAR}f in *_test.go) ;; *) ln -s ${DOLLAR}f . ;; esac; done"

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/redisquota"
)

// quiet drops the Redis client's own log lines: the command says once,
// in its own words, when the store is lost and when it is back.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() {
	redis.SetLogger(quiet{})
	open := func(raw string, warn func(error)) (*sharedStore, error) {
		s, c, err := redisquota.Open(raw)
		if err != nil {
			return nil, &usageError{err: err}
		}
		s.OnChange = warn
		// Warn at start, not at the first request that needs the store.
		ctx, cancel := context.WithTimeout(context.Background(), ratelimit.StoreTimeout*4)
		_ = s.Ping(ctx)
		cancel()
		return &sharedStore{budget: s, quota: s, close: c.Close}, nil
	}
	sharedStoreOpeners["redis"] = open
	sharedStoreOpeners["rediss"] = open
}

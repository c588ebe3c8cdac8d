package main

// The Redis store behind --shared-quota: the command is a module of its
// own, so it links the redisquota satellite directly and the one steady
// binary shares quotas through Redis (ADR 0270).

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
			return nil, err
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

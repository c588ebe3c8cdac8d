package redisquota

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/steadyhttp/steady/credentials"
)

// DefaultName is the namespace [Open] uses when the URL names none.
const DefaultName = "steady"

// ErrURL is returned for a store URL that cannot be used.
var ErrURL = errors.New("redisquota: invalid store URL")

// Open connects to the Redis a URL names, redis://[user:password@]HOST:PORT/DB
// (rediss:// for TLS), with the namespace in an optional name parameter
// (?name=NAME; default [DefaultName]); the other parameters are go-redis'
// own. Nothing is sent until the first call. The client is tuned for a
// store that must never slow a request: no re-sends of its own (the retry
// package falls back to local state instead), and the caller's deadline on
// every call, and every reply bounded as it streams in (at most 1 MiB of
// payload and 1024 elements), so a hostile or broken store fails a call
// with [ErrReplyTooLarge] rather than make the client allocate what it
// announces. Close the returned client when done.
func Open(raw string) (*Store, *redis.Client, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, nil, fmt.Errorf("%w %q: want redis://HOST:PORT/DB", ErrURL, credentials.RedactURLString(raw))
	}
	q := u.Query()
	name := q.Get("name")
	if name == "" {
		name = DefaultName
	}
	q.Del("name")
	u.RawQuery = q.Encode()
	opt, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, nil, fmt.Errorf("%w %q: %s", ErrURL, credentials.RedactURLString(raw), credentials.RedactURLString(err.Error()))
	}
	tune(opt)
	opt.Dialer = boundDialer(redis.NewDialer(opt))
	c := redis.NewClient(opt)
	s, err := New(c, name)
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return s, c, nil
}

// tune sets what a store that must fail fast needs, whatever the URL said.
func tune(opt *redis.Options) {
	opt.MaxRetries = -1 // a failed call is answered locally, not re-sent
	opt.ContextTimeoutEnabled = true
	opt.DialTimeout = min(opt.DialTimeout, 250*time.Millisecond)
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = 250 * time.Millisecond
	}
	opt.PoolSize = max(opt.PoolSize, 4)
	opt.DisableIdentity = true
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

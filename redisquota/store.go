package redisquota

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
)

// A Store keeps a fleet's retry budget and quotas in Redis under one
// namespace. It is safe for concurrent use.
type Store struct {
	client redis.Scripter
	prefix string

	// OnChange, when set, is called when the store stops answering (with
	// the error) and when it answers again (with nil), once per change, so
	// a command can warn once and say when it rejoined. It must not block.
	OnChange func(err error)

	mu   sync.Mutex
	down bool
}

var (
	_ budget.Store     = (*Store)(nil)
	_ ratelimit.Leaser = (*Store)(nil)
)

// ErrName is returned for a namespace that cannot name keys.
var ErrName = errors.New("redisquota: invalid namespace")

// MaxNameLen bounds a namespace, so keys stay short.
const MaxNameLen = 64

// New returns a Store on client under the namespace name: every process
// that passes the same name to the same Redis shares one budget and one set
// of quotas. Choose the name for what is shared (an application, an
// account); never pass an API key as the name, pass [Fingerprint] of it if
// the key is what must separate fleets. A client made by the caller keeps
// its own dialer, so its replies are not bounded as [Open]'s are.
func New(client redis.Scripter, name string) (*Store, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	// The braces make every key of a namespace hash to one cluster slot.
	return &Store{client: client, prefix: "steady:{" + name + "}:"}, nil
}

func checkName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("%w: %q: want 1 to %d characters", ErrName, name, MaxNameLen)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return fmt.Errorf("%w: %q: want letters, digits, '-', '_' or '.'", ErrName, name)
		}
	}
	return nil
}

// Fingerprint returns a short name derived from secret that does not reveal
// it: the first 12 bytes of its SHA-256, in hex.
func Fingerprint(secret string) string {
	sum := sha256.Sum256([]byte("steady-quota\x00" + secret))
	return hex.EncodeToString(sum[:12])
}

// quotaKey names a quota's hash: a digest of the retry package's key (a
// host and maybe a quota name), so nothing a server chose becomes a Redis
// key verbatim.
func (s *Store) quotaKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return s.prefix + "quota:" + hex.EncodeToString(sum[:12])
}

func (s *Store) budgetKey() string { return s.prefix + "budget" }

// result records whether a call reached Redis, telling OnChange of a change.
func (s *Store) result(err error) error {
	if err != nil && errors.Is(err, redis.Nil) {
		err = nil
	}
	s.mu.Lock()
	changed := (err != nil) != s.down
	s.down = err != nil
	s.mu.Unlock()
	if changed && s.OnChange != nil {
		s.OnChange(err)
	}
	return err
}

func millis(d time.Duration) int64 { return d.Milliseconds() }

// duration reads milliseconds from the store, bounded to what a quota may
// announce (a day), so no reply overflows into a negative wait.
func duration(ms int64) time.Duration {
	return time.Duration(min(max(ms, 0), ratelimit.MaxPeriod.Milliseconds())) * time.Millisecond
}

// clamp bounds a count from the store to what was asked.
func clamp(n int64, want int) int { return int(min(max(n, 0), int64(max(want, 0)))) }

func toInt64s(v any, n int) ([]int64, error) {
	xs, ok := v.([]any)
	if !ok || len(xs) != n {
		return nil, fmt.Errorf("redisquota: unexpected script reply %T", v)
	}
	out := make([]int64, n)
	for i, x := range xs {
		n, ok := x.(int64)
		if !ok {
			return nil, fmt.Errorf("redisquota: unexpected script reply element %T", x)
		}
		out[i] = n
	}
	return out, nil
}

// run executes a script, loading it on first use (EVALSHA, then EVAL).
func (s *Store) run(ctx context.Context, sc *redis.Script, keys []string, args ...any) (any, error) {
	v, err := sc.Run(ctx, s.client, keys, args...).Result()
	return v, s.result(err)
}

// Ping checks that Redis answers, as a command does at start so it can warn
// at once rather than at the first request that needs the store; the
// outcome goes to OnChange like any call's.
func (s *Store) Ping(ctx context.Context) error {
	c, ok := s.client.(interface {
		Ping(context.Context) *redis.StatusCmd
	})
	if !ok {
		return nil
	}
	return s.result(c.Ping(ctx).Err())
}

package redisquota_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/redisquota"
	"github.com/steadyhttp/steady/redisquota/redistest"
)

// process is what one process of a fleet holds: its own client and store.
type process struct {
	store  *redisquota.Store
	client *redis.Client
	calls  atomic.Int64 // commands sent

	mu      sync.Mutex
	changes []error // what OnChange heard
}

func open(t testing.TB, url string) *process {
	t.Helper()
	s, c, err := redisquota.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	p := &process{store: s, client: c}
	s.OnChange = func(err error) {
		p.mu.Lock()
		p.changes = append(p.changes, err)
		p.mu.Unlock()
	}
	c.AddHook(countHook{&p.calls})
	t.Cleanup(func() { c.Close() })
	return p
}

func (p *process) heard() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.changes...)
}

// countHook counts the commands a client sends (EVALSHA and EVAL alike).
type countHook struct{ n *atomic.Int64 }

func (countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func startRedis(t testing.TB) *redistest.Server { return redistest.Start(t) }

// keys lists every key in the server.
func keys(t *testing.T, srv *redistest.Server) []string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
	defer c.Close()
	ks, err := c.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func mustGet(t *testing.T, tr http.RoundTripper, url string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

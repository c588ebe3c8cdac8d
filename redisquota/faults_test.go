package redisquota_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// flakyAPI answers 200 with a generous quota, and a 503 to every twentieth
// request, so re-sends draw on the budget.
func flakyAPI(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		w.Header().Set("X-RateLimit-Remaining", strconv.FormatInt(1_000_000-i, 10))
		w.Header().Set("X-RateLimit-Reset", "3600")
		if i%20 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(api.Close)
	return api, &n
}

func sharedTransport(p *process) *retry.Transport {
	return retry.New(nil, retry.Policy{Pace: true, Quotas: &retry.SharedPacer{Leaser: p.store}, Budget: &retry.Budget{Store: p.store},
		InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
}

// Redis unreachable at start: one warning, every request answered on local
// state, and no request waits on the store more than once a second.
func TestRedisUnreachableAtStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens here now
	p := open(t, "redis://"+addr+"/0?name=gone")
	api, _ := flakyAPI(t)
	tr := sharedTransport(p)
	defer tr.CloseIdleConnections()
	for i := range 200 {
		mustGet(t, tr, api.URL+"/"+strconv.Itoa(i))
	}
	heard := p.heard()
	if len(heard) != 1 || heard[0] == nil {
		t.Fatalf("store changes %v; want one warning", heard)
	}
}

// Redis killed mid-run: the next request falls back, one warning, nothing
// is lost; once Redis is back the processes rejoin and the shared state
// fills again.
func TestRedisKilledMidRunAndBack(t *testing.T) {
	srv := startRedis(t)
	p := open(t, srv.URL("kill"))
	api, _ := flakyAPI(t)
	tr := sharedTransport(p)
	defer tr.CloseIdleConnections()
	for i := range 100 {
		mustGet(t, tr, api.URL+"/a"+strconv.Itoa(i))
	}
	if len(keys(t, srv)) == 0 {
		t.Fatal("no shared state while Redis was up")
	}
	srv.Kill()
	for i := range 100 {
		mustGet(t, tr, api.URL+"/b"+strconv.Itoa(i))
	}
	if heard := p.heard(); len(heard) != 1 || heard[0] == nil {
		t.Fatalf("store changes %v after the kill; want one warning", heard)
	}
	srv.Restart()
	// The store is tried again a second after it failed; keep working
	// until it has rejoined, within a bound.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; len(p.heard()) < 2; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("not rejoined 10s after Redis came back; changes %v", p.heard())
		}
		mustGet(t, tr, api.URL+"/c"+strconv.Itoa(i))
		time.Sleep(10 * time.Millisecond) // pace the loop; the bound above ends it
	}
	if heard := p.heard(); heard[1] != nil {
		t.Fatalf("second change %v; want the rejoin (nil)", heard[1])
	}
	// The budget rejoins on its own next call, a second at most after its
	// last failed one.
	deadline = time.Now().Add(10 * time.Second)
	for i := 0; len(keys(t, srv)) < 2; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("keys 10s after rejoining %v; want the budget and the quota back", keys(t, srv))
		}
		mustGet(t, tr, api.URL+"/d"+strconv.Itoa(i))
		time.Sleep(10 * time.Millisecond) // pace the loop; the bound above ends it
	}
}

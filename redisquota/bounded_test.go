package redisquota_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/redisquota"
	"github.com/steadyhttp/steady/redisquota/redistest"
	"github.com/steadyhttp/steady/retry"
)

// A store, or someone between us and it, that announces a reply larger
// than any the store sends is refused before the client allocates for it:
// the call fails, the store says so once, and the pacer answers locally.
func TestHostileReplyHeaders(t *testing.T) {
	for _, c := range []struct{ name, reply string }{
		{"array", "*2000000000\r\n"},
		{"bulk", "$4000000000\r\n"},
		{"map", "%1000000000\r\n"},
		{"set", "~2000000000\r\n"},
		{"push", ">2000000000\r\n"},
		{"verbatim", "=4000000000\r\n"},
		{"blob error", "!4000000000\r\n"},
		{"nested", "*5\r\n*1000\r\n*1000\r\n*1000\r\n"},
		{"bulk after array", "*5\r\n$3000000\r\n"},
		{"endless line", "+" + string(make([]byte, 1<<20))},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := open(t, "redis://"+liar(t, c.reply)+"/0?name=hostile")
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := p.store.TakeQuota(t.Context(), "h", ratelimit.LeaseCall{Want: 3})
			(&budget.Budget{Store: p.store}).Withdraw(time.Now()) // answered locally
			runtime.ReadMemStats(&after)
			if !errors.Is(err, redisquota.ErrReplyTooLarge) {
				t.Fatalf("error %v; want ErrReplyTooLarge", err)
			}
			// TotalAlloc counts the whole process (other clients' pools
			// included): the bound is loose, and far below what a header
			// announcing gigabytes would cost.
			if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
				t.Errorf("%d bytes allocated for a reply header; want the header refused first", got)
			}
			if h := p.heard(); len(h) != 1 || h[0] == nil {
				t.Errorf("store changes %v; want one warning", h)
			}
		})
	}
}

// Behind a transport, a hostile store costs nothing: requests are paced
// locally and answered.
func TestHostileStoreDegradesToLocal(t *testing.T) {
	p := open(t, "redis://"+liar(t, "*2000000000\r\n")+"/0?name=hostile")
	var served atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("X-RateLimit-Remaining", "50")
		w.Header().Set("X-RateLimit-Reset", "60")
	}))
	defer api.Close()
	tr := retry.New(nil, retry.Policy{Pacer: &ratelimit.SharedPacer{Leaser: p.store}})
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for range 5 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if served.Load() != 5 {
		t.Errorf("%d requests served; want 5", served.Load())
	}
	if h := p.heard(); len(h) != 1 || h[0] == nil {
		t.Errorf("store changes %v; want one warning", h)
	}
}

// One key planted in a shared Redis, saying the quota is spent for the
// next 23h53m, does not make the fleet refuse while the API itself reports
// quota left: fresher news from the API wins, and a stored reset further
// than MaxRetryAfter past the API's own is ignored.
func TestPlantedResetDoesNotHoldTheFleet(t *testing.T) {
	srv := startRedis(t)
	p := open(t, srv.URL("planted"))
	var served atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("X-RateLimit-Remaining", "500")
		w.Header().Set("X-RateLimit-Reset", "60")
	}))
	defer api.Close()
	plant(t, srv, "planted", api.Listener.Addr().String(), 23*time.Hour+53*time.Minute)
	tr := retry.New(nil, retry.Policy{Pacer: &ratelimit.SharedPacer{Leaser: p.store}})
	defer tr.CloseIdleConnections()
	for i := range 30 {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, api.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp.Body.Close()
	}
	if served.Load() != 30 {
		t.Errorf("%d of 30 requests reached an API that reports quota left", served.Load())
	}
	// The store itself takes the API's word over the planted reset.
	plant(t, srv, "planted", "other", 23*time.Hour+53*time.Minute)
	seen := ratelimit.Quota{Remaining: 500, Reset: time.Minute}
	if l := take(t, p.store, "other", ratelimit.LeaseCall{Want: 20, Observed: true, Seen: seen}); l.Count != 20 || l.Start != 0 {
		t.Errorf("lease %+v with the API reporting 500 left; want 20 permits now", l)
	}
}

// plant writes, as a hostile neighbour would, a spent quota for key under
// namespace name, reset in d on the server's clock.
func plant(t *testing.T, srv *redistest.Server, name, key string, d time.Duration) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
	defer c.Close()
	now, err := c.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(key))
	k := "steady:{" + name + "}:quota:" + hex.EncodeToString(sum[:12])
	reset := now.Add(d).UnixMilli()
	if err := c.HSet(t.Context(), k, "rem", "0", "reset", strconv.FormatInt(reset, 10), "lim", "0", "win", "0",
		"ahead", "0", "estl", "0", "estw", "0", "wid", "7", "r0", "0").Err(); err != nil {
		t.Fatal(err)
	}
}

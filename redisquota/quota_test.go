package redisquota_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/redisquota"
	"github.com/steadyhttp/steady/retry"
)

func take(t *testing.T, s *redisquota.Store, key string, c ratelimit.LeaseCall) ratelimit.Lease {
	t.Helper()
	l, err := s.TakeQuota(context.Background(), key, c)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A quota one process saw is the fleet's: leases shrink as it runs out and,
// once it is spent, every process gets slots after the reset, spaced at the
// announced rate and never the same slot twice.
func TestQuotaOneWindowForAFleet(t *testing.T) {
	srv := startRedis(t)
	a, b := open(t, srv.URL("fleet")).store, open(t, srv.URL("fleet")).store
	const key = "api.test"
	if l := take(t, a, key, ratelimit.LeaseCall{Want: 20}); l.Count != 20 || l.Start != 0 {
		t.Fatalf("nothing known: lease %+v; want 20 permits now", l)
	}
	seen := ratelimit.Quota{Remaining: 12, Reset: 5 * time.Second, Limit: 50, Window: 5 * time.Second}
	l := take(t, a, key, ratelimit.LeaseCall{Want: 20, Observed: true, Seen: seen})
	if l.Count != 3 || l.Start != 0 || l.TTL <= 0 || l.TTL > 5*time.Second {
		t.Fatalf("12 remaining: lease %+v; want a quarter (3) now, valid until the reset", l)
	}
	total := l.Count
	for total < 12 {
		l := take(t, b, key, ratelimit.LeaseCall{Want: 20})
		if l.Start != 0 || l.Count < 1 {
			t.Fatalf("after %d of 12 permits: lease %+v; want permits now", total, l)
		}
		total += l.Count
	}
	if total != 12 {
		t.Fatalf("the fleet got %d permits from 12 remaining", total)
	}
	first := take(t, a, key, ratelimit.LeaseCall{Want: 20})
	second := take(t, b, key, ratelimit.LeaseCall{Want: 20})
	// Slots go out a tenth of the limit at a time, so a holder that stops
	// early strands few of them.
	if first.Count != 5 || first.Interval != 25*time.Millisecond || first.Start <= 0 || first.Start > 5*time.Second {
		t.Fatalf("spent: lease %+v; want 5 slots 25ms apart after the reset (the window's quota in its first quarter)", first)
	}
	// The second lease begins where the first ends, give or take the
	// milliseconds between the two calls on Redis' clock.
	gap := second.Start - (first.Start + 5*first.Interval)
	if second.Count != 5 || gap > 0 || gap < -time.Second {
		t.Errorf("second lease %+v after %+v; want the next 5 slots", second, first)
	}
}

// A reset is carried as an age and a duration, never a process's clock:
// the same observation made an hour "later" by a skewed process lands on
// the same window.
func TestQuotaIgnoresProcessClocks(t *testing.T) {
	srv := startRedis(t)
	a, b := open(t, srv.URL("skew")).store, open(t, srv.URL("skew")).store
	seen := ratelimit.Quota{Remaining: 8, Reset: 3 * time.Second}
	take(t, a, "h", ratelimit.LeaseCall{Observed: true, Seen: seen})
	// b saw the same response 500ms ago; its reset is the same instant.
	take(t, b, "h", ratelimit.LeaseCall{Observed: true, Seen: ratelimit.Quota{Remaining: 6, Reset: 3500 * time.Millisecond}, Age: 500 * time.Millisecond})
	n := 0
	for range 10 {
		if l := take(t, a, "h", ratelimit.LeaseCall{Want: 1}); l.Start == 0 {
			n += l.Count
		}
		if l := take(t, b, "h", ratelimit.LeaseCall{Want: 1}); l.Start == 0 {
			n += l.Count
		}
	}
	if n != 6 {
		t.Errorf("%d permits granted in a window with 6 remaining", n)
	}
}

// Keys are namespaced by the caller's name; neither the host nor any key
// material appears in them.
func TestQuotaKeys(t *testing.T) {
	srv := startRedis(t)
	s := open(t, srv.URL("team-a")).store
	take(t, s, "api.example.gov", ratelimit.LeaseCall{Want: 1, Observed: true, Seen: ratelimit.Quota{Remaining: 3, Reset: time.Second}})
	(&budget.Budget{Store: s}).Withdraw(time.Now())
	ks := keys(t, srv)
	if len(ks) != 2 {
		t.Fatalf("keys %q; want one quota and one budget", ks)
	}
	for _, k := range ks {
		if !strings.HasPrefix(k, "steady:{team-a}:") || strings.Contains(k, "example") {
			t.Errorf("key %q: want it under steady:{team-a}: with no host in it", k)
		}
	}
	if _, err := redisquota.New(nil, "bad name"); err == nil {
		t.Error("a namespace with a space was accepted")
	}
	if _, err := redisquota.New(nil, strings.Repeat("x", redisquota.MaxNameLen+1)); err == nil {
		t.Error("an over-long namespace was accepted")
	}
	if fp := redisquota.Fingerprint("sekrit-key"); len(fp) != 24 || strings.Contains(fp, "sekrit") {
		t.Errorf("fingerprint %q", fp)
	}
}

// Steady traffic costs at most one Redis round trip per ten requests, for
// the budget and the quota together, with rate-limit headers on every
// response.
func TestRoundTripsPerRequest(t *testing.T) {
	srv := startRedis(t)
	p := open(t, srv.URL("rt"))
	var served atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		w.Header().Set("X-RateLimit-Remaining", strconv.FormatInt(100000-n, 10))
		w.Header().Set("X-RateLimit-Reset", "3600")
	}))
	defer api.Close()
	tr := retry.New(nil, retry.Policy{Pacer: &ratelimit.SharedPacer{Leaser: p.store}, Budget: &budget.Budget{Store: p.store}})
	defer tr.CloseIdleConnections()
	const n = 2000
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for range n / 4 {
				mustGet(t, tr, api.URL+"/"+strconv.Itoa(w))
			}
		})
	}
	wg.Wait()
	if got := p.calls.Load(); got*10 > n {
		t.Errorf("%d Redis commands for %d requests; want at most one per ten", got, n)
	}
	// A healthy store may still miss its deadline on a loaded machine
	// (under -race, with other tests running); that is a timeout, never
	// another failure.
	for _, err := range p.heard() {
		var ne net.Error
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
			t.Errorf("store change %v on a healthy run", err)
		}
	}
}

// Permits handed back unused go to the rest of the fleet, but only in the
// window they were granted in.
func TestQuotaReturnedPermits(t *testing.T) {
	srv := startRedis(t)
	a, b := open(t, srv.URL("ret")).store, open(t, srv.URL("ret")).store
	seen := ratelimit.Quota{Remaining: 40, Reset: 30 * time.Second, Limit: 100, Window: time.Minute}
	l := take(t, a, "h", ratelimit.LeaseCall{Want: 20, Observed: true, Seen: seen})
	if l.Count != 10 {
		t.Fatalf("lease %+v; want 10 of 40", l)
	}
	take(t, a, "h", ratelimit.LeaseCall{Returned: 9, Epoch: l.Epoch})
	take(t, a, "h", ratelimit.LeaseCall{Returned: 50, Epoch: l.Epoch + 1}) // another window's: ignored
	n := 0
	for range 100 {
		l := take(t, b, "h", ratelimit.LeaseCall{Want: 20})
		if l.Start > 0 {
			break
		}
		n += l.Count
	}
	if n != 39 {
		t.Errorf("the fleet got %d permits after 1 of 40 was used; want 39", n)
	}
}

// A transport whose idle connections are closed hands back the permits it
// held for now.
func TestTransportReleasesPermits(t *testing.T) {
	srv := startRedis(t)
	p := open(t, srv.URL("rel"))
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"default";q=100;w=60`)
		w.Header().Set("RateLimit", `"default";r=80;t=30`)
	}))
	defer api.Close()
	tr := retry.New(nil, retry.Policy{Pacer: &ratelimit.SharedPacer{Leaser: p.store}})
	mustGet(t, tr, api.URL) // learns the quota
	mustGet(t, tr, api.URL) // takes a lease of 20 (a quarter of 80), uses one
	tr.CloseIdleConnections()
	other := open(t, srv.URL("rel")).store
	// The quota is named ("default"), so its key is the host and the name.
	key := api.Listener.Addr().String() + "\x00default"
	n := 0
	for range 100 {
		l := take(t, other, key, ratelimit.LeaseCall{Want: 20})
		if l.Start > 0 {
			break
		}
		n += l.Count
	}
	if n != 79 {
		t.Errorf("the fleet got %d permits after 1 of 80 was used; want 79", n)
	}
}

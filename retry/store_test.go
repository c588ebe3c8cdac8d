package retry_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// quotaStoreFunc is a fake QuotaStore.
type quotaStoreFunc func(context.Context, string, ratelimit.LeaseCall) (ratelimit.Lease, error)

func (f quotaStoreFunc) TakeQuota(ctx context.Context, key string, c ratelimit.LeaseCall) (ratelimit.Lease, error) {
	return f(ctx, key, c)
}

var errStoreDown = errors.New("store down")

// Requests take their permits from the store's leases, one store call per
// lease, and a request held by the store waits for its slot.
func TestSharedQuotaLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var calls []ratelimit.LeaseCall
		held := false
		store := quotaStoreFunc(func(_ context.Context, key string, c ratelimit.LeaseCall) (ratelimit.Lease, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, c)
			if key != "api.test" {
				t.Errorf("quota key %q; want the host", key)
			}
			if c.Observed && c.Seen.Remaining == 0 {
				held = true
			}
			if held {
				return ratelimit.Lease{Count: min(c.Want, 3), Start: 5 * time.Second, Interval: time.Second, TTL: time.Second}, nil
			}
			return ratelimit.Lease{Count: c.Want, TTL: 10 * time.Second}, nil
		})
		remaining := 90
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("X-RateLimit-Remaining", itoa(remaining))
			h.Set("X-RateLimit-Reset", "2")
			remaining = max(remaining-10, 0)
			return respond(r, 200, h, "ok"), nil
		})
		tr := retry.New(next, retry.Policy{Pacer: &ratelimit.SharedPacer{Leaser: store}, Rand: func() float64 { return 0 }})
		for range 10 {
			mustGet(t, tr, "http://api.test/x")
		}
		mu.Lock()
		n := len(calls)
		mu.Unlock()
		// Nine responses with quota to spare, the tenth says none remains:
		// one lease, then the spent quota told at once.
		if n != 2 || !calls[1].Observed || calls[1].Seen.Remaining != 0 || calls[1].Want != 0 {
			t.Fatalf("store calls %+v; want one lease and one report of the spent quota", calls)
		}
		start := time.Now()
		mustGet(t, tr, "http://api.test/x")
		// The local pacer would hold until the reset the response named
		// (2 s); the fleet's slot is later (5 s), and the later wait wins,
		// with no jitter added to a spaced slot.
		if got, want := time.Since(start), 5*time.Second; got != want {
			t.Errorf("held %v; want the fleet's slot, %v", got, want)
		}
	})
}

// A store that fails leaves pacing to the process, after one call.
func TestSharedQuotaDegrades(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		store := quotaStoreFunc(func(context.Context, string, ratelimit.LeaseCall) (ratelimit.Lease, error) {
			calls.Add(1)
			return ratelimit.Lease{}, errStoreDown
		})
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("X-RateLimit-Remaining", "1000")
			h.Set("X-RateLimit-Reset", "60")
			return respond(r, 200, h, "ok"), nil
		})
		tr := retry.New(next, retry.Policy{Pacer: &ratelimit.SharedPacer{Leaser: store}})
		start := time.Now()
		for range 50 {
			mustGet(t, tr, "http://api.test/x")
		}
		if got := calls.Load(); got != 1 {
			t.Errorf("%d calls to a failed store within a second; want 1", got)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("requests took %v with a failing store; want no delay", got)
		}
	})
}

func mustGet(t *testing.T, tr http.RoundTripper, url string) {
	t.Helper()
	resp, err := tr.RoundTrip(get(context.Background(), url))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// A host that never announced a quota costs no store call.
func TestSharedQuotaOnlyForHostsWithAQuota(t *testing.T) {
	var calls atomic.Int32
	store := quotaStoreFunc(func(context.Context, string, ratelimit.LeaseCall) (ratelimit.Lease, error) {
		calls.Add(1)
		return ratelimit.Lease{Count: 20, TTL: time.Second}, nil
	})
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) { return respond(r, 200, nil, "ok"), nil })
	tr := retry.New(next, retry.Policy{Pacer: &ratelimit.SharedPacer{Leaser: store}})
	for range 50 {
		mustGet(t, tr, "http://api.test/x")
	}
	if got := calls.Load(); got != 0 {
		t.Errorf("%d store calls for a host without a quota; want none", got)
	}
}

// Closing a transport's idle connections hands back its leased re-sends
// and credits the first attempts not yet told.
func TestBudgetReleasedOnClose(t *testing.T) {
	var got []budget.Take
	var mu sync.Mutex
	store := budgetStoreFunc(func(_ context.Context, r budget.Take) (budget.Lease, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		return budget.Lease{Granted: r.Want, TTL: time.Minute}, nil
	})
	b := &budget.Budget{Store: store}
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) { return respond(r, 200, nil, "ok"), nil })
	tr := retry.New(next, retry.Policy{Budget: b})
	for range 7 {
		mustGet(t, tr, "http://api.test/x")
	}
	b.Withdraw(time.Now()) // a lease of two; one used
	tr.CloseIdleConnections()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[1].Returned != 1 || got[1].Deposits != 0 || got[0].Deposits != 7 {
		t.Errorf("store calls %+v; want the lease with 7 first attempts, then one re-send handed back", got)
	}
}

// budgetStoreFunc is a fake budget.Store.
type budgetStoreFunc func(context.Context, budget.Take) (budget.Lease, error)

func (f budgetStoreFunc) TakeBudget(ctx context.Context, r budget.Take) (budget.Lease, error) {
	return f(ctx, r)
}

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

	"github.com/steadyhttp/steady/retry"
)

// budgetStoreFunc is a fake BudgetStore.
type budgetStoreFunc func(context.Context, retry.BudgetTake) (retry.BudgetLease, error)

func (f budgetStoreFunc) TakeBudget(ctx context.Context, r retry.BudgetTake) (retry.BudgetLease, error) {
	return f(ctx, r)
}

// quotaStoreFunc is a fake QuotaStore.
type quotaStoreFunc func(context.Context, string, retry.QuotaCall) (retry.QuotaLease, error)

func (f quotaStoreFunc) TakeQuota(ctx context.Context, key string, c retry.QuotaCall) (retry.QuotaLease, error) {
	return f(ctx, key, c)
}

var errStoreDown = errors.New("store down")

// A shared budget credits first attempts in batches, leases re-sends and
// hands back what expired unused, so the store sees every first attempt
// and the fleet loses no re-send to a lease that ran out.
func TestBudgetStoreBatchesAndLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var calls []retry.BudgetTake
		tokens := 5
		store := budgetStoreFunc(func(_ context.Context, r retry.BudgetTake) (retry.BudgetLease, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, r)
			tokens += r.Returned
			g := min(r.Want, tokens)
			tokens -= g
			return retry.BudgetLease{Granted: g, TTL: 2 * time.Second}, nil
		})
		b := &retry.Budget{Store: store}
		for range 120 {
			b.Deposit()
		}
		if got, want := len(calls), 2; got != want {
			t.Fatalf("120 first attempts made %d store calls; want %d (one per 50)", got, want)
		}
		for _, c := range calls {
			if c.Deposits != 50 || c.Want != 0 {
				t.Errorf("deposit call %+v; want 50 deposits and no re-sends", c)
			}
		}
		for range 2 {
			if !b.Withdraw(time.Now()) {
				t.Fatal("a store with tokens refused a re-send")
			}
		}
		if got, want := len(calls), 3; got != want {
			t.Fatalf("two re-sends made %d store calls in all; want %d (one lease of two)", got, want)
		}
		if c := calls[2]; c.Deposits != 20 || c.Want != 2 || c.Ratio != retry.DefaultBudgetRatio {
			t.Errorf("lease call %+v; want the 20 pending first attempts, 2 re-sends, the default ratio", c)
		}
		b.Withdraw(time.Now()) // a lease of two more; one used
		time.Sleep(3 * time.Second)
		b.Withdraw(time.Now()) // the lease expired: its unused re-send goes back
		if c := calls[len(calls)-1]; c.Returned != 1 {
			t.Errorf("call after an expired lease returned %d re-sends; want 1", c.Returned)
		}
		for b.Withdraw(time.Now()) {
		}
		st := b.Stats(time.Now())
		if st.Allowed != 5 || st.Refused != 1 {
			t.Errorf("stats %+v; want the store's 5 re-sends allowed and 1 refused", st)
		}
	})
}

// A store that fails is left alone for a second, answered locally in the
// meantime, and asked again afterwards; first attempts counted while it was
// down are credited when it is back.
func TestBudgetStoreDegradesAndRejoins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var down atomic.Bool
		var calls atomic.Int32
		var credited atomic.Int64
		store := budgetStoreFunc(func(_ context.Context, r retry.BudgetTake) (retry.BudgetLease, error) {
			calls.Add(1)
			if down.Load() {
				return retry.BudgetLease{}, errStoreDown
			}
			credited.Add(r.Deposits)
			return retry.BudgetLease{}, nil // an empty shared bucket
		})
		b := &retry.Budget{Store: store, MaxTokens: 3}
		for range 100 {
			b.Deposit()
		}
		if b.Withdraw(time.Now()) {
			t.Fatal("an empty shared bucket allowed a re-send")
		}
		down.Store(true)
		n := calls.Load()
		// The local bucket has banked its share of 100 first attempts (capped
		// at 3) and answers while the store is down, after one failed call.
		for i := range 3 {
			if !b.Withdraw(time.Now()) {
				t.Fatalf("re-send %d refused with the store down and local tokens", i+1)
			}
		}
		for range 200 {
			b.Deposit()
		}
		if got := calls.Load() - n; got != 1 {
			t.Errorf("%d store calls while it was down within its second; want 1", got)
		}
		down.Store(false)
		time.Sleep(time.Second)
		b.Withdraw(time.Now())
		if got, want := credited.Load(), int64(300); got != want {
			t.Errorf("store credited %d first attempts; want all %d", got, want)
		}
	})
}

// Every store call carries a short deadline, so a store that hangs costs
// a request at most retry.StoreTimeout.
func TestStoreCallsHaveADeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := budgetStoreFunc(func(ctx context.Context, _ retry.BudgetTake) (retry.BudgetLease, error) {
			<-ctx.Done()
			return retry.BudgetLease{}, ctx.Err()
		})
		b := &retry.Budget{Store: store}
		start := time.Now()
		b.Withdraw(start)
		if got := time.Since(start); got != retry.StoreTimeout {
			t.Errorf("a hanging store held a re-send %v; want %v", got, retry.StoreTimeout)
		}
	})
}

// Requests take their permits from the store's leases, one store call per
// lease, and a request held by the store waits for its slot.
func TestSharedQuotaLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var calls []retry.QuotaCall
		held := false
		store := quotaStoreFunc(func(_ context.Context, key string, c retry.QuotaCall) (retry.QuotaLease, error) {
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
				return retry.QuotaLease{Count: min(c.Want, 3), Start: 5 * time.Second, Interval: time.Second, TTL: time.Second}, nil
			}
			return retry.QuotaLease{Count: c.Want, TTL: 10 * time.Second}, nil
		})
		remaining := 90
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("X-RateLimit-Remaining", itoa(remaining))
			h.Set("X-RateLimit-Reset", "2")
			remaining = max(remaining-10, 0)
			return respond(r, 200, h, "ok"), nil
		})
		tr := retry.New(next, retry.Policy{Pace: true, Quotas: &retry.SharedPacer{Leaser: store}, Rand: func() float64 { return 0 }})
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
		store := quotaStoreFunc(func(context.Context, string, retry.QuotaCall) (retry.QuotaLease, error) {
			calls.Add(1)
			return retry.QuotaLease{}, errStoreDown
		})
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("X-RateLimit-Remaining", "1000")
			h.Set("X-RateLimit-Reset", "60")
			return respond(r, 200, h, "ok"), nil
		})
		tr := retry.New(next, retry.Policy{Pace: true, Quotas: &retry.SharedPacer{Leaser: store}})
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
	store := quotaStoreFunc(func(context.Context, string, retry.QuotaCall) (retry.QuotaLease, error) {
		calls.Add(1)
		return retry.QuotaLease{Count: 20, TTL: time.Second}, nil
	})
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) { return respond(r, 200, nil, "ok"), nil })
	tr := retry.New(next, retry.Policy{Pace: true, Quotas: &retry.SharedPacer{Leaser: store}})
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
	var got []retry.BudgetTake
	var mu sync.Mutex
	store := budgetStoreFunc(func(_ context.Context, r retry.BudgetTake) (retry.BudgetLease, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		return retry.BudgetLease{Granted: r.Want, TTL: time.Minute}, nil
	})
	b := &retry.Budget{Store: store}
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

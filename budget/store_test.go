package budget_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/budget"
)

// budgetStoreFunc is a fake BudgetStore.
type budgetStoreFunc func(context.Context, budget.Take) (budget.Lease, error)

func (f budgetStoreFunc) TakeBudget(ctx context.Context, r budget.Take) (budget.Lease, error) {
	return f(ctx, r)
}

var errStoreDown = errors.New("store down")

// A shared budget credits first attempts in batches, leases re-sends and
// hands back what expired unused, so the store sees every first attempt
// and the fleet loses no re-send to a lease that ran out.
func TestBudgetStoreBatchesAndLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var calls []budget.Take
		tokens := 5
		store := budgetStoreFunc(func(_ context.Context, r budget.Take) (budget.Lease, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, r)
			tokens += r.Returned
			g := min(r.Want, tokens)
			tokens -= g
			return budget.Lease{Granted: g, TTL: 2 * time.Second}, nil
		})
		b := &budget.Budget{Store: store}
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
		if c := calls[2]; c.Deposits != 20 || c.Want != 2 || c.Ratio != budget.DefaultRatio {
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
		store := budgetStoreFunc(func(_ context.Context, r budget.Take) (budget.Lease, error) {
			calls.Add(1)
			if down.Load() {
				return budget.Lease{}, errStoreDown
			}
			credited.Add(r.Deposits)
			return budget.Lease{}, nil // an empty shared bucket
		})
		b := &budget.Budget{Store: store, MaxTokens: 3}
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
// a request at most budget.StoreTimeout.
func TestStoreCallsHaveADeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := budgetStoreFunc(func(ctx context.Context, _ budget.Take) (budget.Lease, error) {
			<-ctx.Done()
			return budget.Lease{}, ctx.Err()
		})
		b := &budget.Budget{Store: store}
		start := time.Now()
		b.Withdraw(start)
		if got := time.Since(start); got != budget.StoreTimeout {
			t.Errorf("a hanging store held a re-send %v; want %v", got, budget.StoreTimeout)
		}
	})
}

package redisquota_test

import (
	"testing"
	"time"

	"github.com/steadyhttp/steady/budget"
)

// Two processes on one namespace draw on one bucket: together they get the
// bucket's ten re-sends, not ten each; on separate namespaces, ten each.
func TestBudgetOneBucketForAFleet(t *testing.T) {
	srv := startRedis(t)
	drain := func(bs ...*budget.Budget) int {
		n := 0
		for progress := true; progress; {
			progress = false
			for _, b := range bs {
				if b.Withdraw(time.Now()) {
					n++
					progress = true
				}
			}
		}
		return n
	}
	newBudget := func(name string) *budget.Budget {
		return &budget.Budget{Store: open(t, srv.URL(name)).store, MinPerSecond: -1}
	}
	if got, want := drain(newBudget("fleet"), newBudget("fleet")), 10; got != want {
		t.Errorf("two processes on one namespace got %d re-sends; want %d", got, want)
	}
	if got, want := drain(newBudget("a"), newBudget("b")), 20; got != want {
		t.Errorf("two namespaces got %d re-sends; want %d", got, want)
	}
}

// First attempts made by one process earn re-sends for another.
func TestBudgetDepositsCountForTheFleet(t *testing.T) {
	srv := startRedis(t)
	a := &budget.Budget{Store: open(t, srv.URL("fleet")).store, MinPerSecond: -1}
	b := &budget.Budget{Store: open(t, srv.URL("fleet")).store, MinPerSecond: -1}
	for b.Withdraw(time.Now()) {
	}
	for range 100 { // credited in two batches of 50: ten re-sends' worth
		a.Deposit()
	}
	n := 0
	for b.Withdraw(time.Now()) {
		n++
	}
	if got, want := n, 10; got != want {
		t.Errorf("after 100 first attempts elsewhere, %d re-sends; want %d", got, want)
	}
}

// Process clocks play no part: two processes whose clocks are hours apart
// share the bucket exactly as two in step do.
func TestBudgetIgnoresProcessClocks(t *testing.T) {
	srv := startRedis(t)
	ahead := &budget.Budget{Store: open(t, srv.URL("skew")).store, MinPerSecond: -1}
	behind := &budget.Budget{Store: open(t, srv.URL("skew")).store, MinPerSecond: -1}
	n := 0
	for i := 0; i < 40; i++ {
		b, skew := ahead, 3*time.Hour
		if i%2 == 1 {
			b, skew = behind, -3*time.Hour
		}
		if b.Withdraw(time.Now().Add(skew)) {
			n++
		}
	}
	if got, want := n, 10; got != want {
		t.Errorf("skewed processes got %d re-sends; want %d", got, want)
	}
}

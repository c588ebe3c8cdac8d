package budget

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Lease sizes for a shared budget (ADR 200). First attempts are credited
// once fifty have gathered, or with the next lease, so traffic without
// failures costs one store call per fifty requests. Re-sends are leased two at
// a time: an outage's re-sends come in bursts, and a holder that crashes
// takes at most two re-sends from the fleet, which the floor refills within
// a second.
const (
	budgetDepositBatch = 50
	budgetLeaseSize    = 2
)

// sharedBudget is a Budget's view of its store: the lease in hand and the
// first attempts not yet credited.
type sharedBudget struct {
	pending atomic.Int64 // first attempts not yet credited to the store
	guard   storeGuard

	mu       sync.Mutex // one store call at a time; guards the lease
	leased   int
	leaseEnd time.Time
}

// deposit credits a batch of first attempts when one has gathered. It never
// waits for another call in flight: that call takes the batch with it.
func (s *sharedBudget) deposit(b *Budget) {
	if s.pending.Add(1) < budgetDepositBatch {
		return
	}
	now := time.Now()
	if !s.guard.usable(now) || !s.mu.TryLock() {
		return
	}
	defer s.mu.Unlock()
	s.call(b, 0, now)
}

// withdraw asks the store for one re-send. answered is false when the store
// could not be asked or failed; the caller then asks the local bucket.
func (s *sharedBudget) withdraw(b *Budget, now time.Time) (allowed, answered bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leased > 0 && now.Before(s.leaseEnd) {
		s.leased--
		return true, true
	}
	if !s.guard.usable(now) {
		return false, false
	}
	lease, ok := s.call(b, budgetLeaseSize, now)
	if !ok {
		return false, false
	}
	if lease.Granted == 0 {
		return false, true
	}
	s.leased, s.leaseEnd = lease.Granted-1, now.Add(lease.TTL)
	return true, true
}

// call makes one store call under s.mu: it credits the pending first
// attempts and hands back an expired lease's unused re-sends.
func (s *sharedBudget) call(b *Budget, want int, now time.Time) (Lease, bool) {
	ratio, floor, maxTokens := b.params()
	deposits := s.pending.Swap(0)
	returned := s.leased // expired or about to be replaced: back to the fleet
	s.leased = 0
	ctx, cancel := storeContext(context.Background())
	lease, err := b.Store.TakeBudget(ctx, Take{
		Ratio: ratio, MinPerSecond: floor, MaxTokens: maxTokens,
		Deposits: deposits, Returned: returned, Want: want,
	})
	cancel()
	s.guard.result(err, now)
	if err != nil {
		// The first attempts are credited on a later call; the returned
		// re-sends are lost to the fleet until its floor refills them.
		s.pending.Add(deposits)
		return Lease{}, false
	}
	lease.Granted = min(max(lease.Granted, 0), max(want, 0))
	return lease, true
}

// release credits the pending first attempts and hands back the leased
// re-sends ([Budget.Release]).
func (s *sharedBudget) release(b *Budget) {
	now := time.Now()
	if !s.guard.usable(now) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leased > 0 || s.pending.Load() > 0 {
		s.call(b, 0, now)
	}
}

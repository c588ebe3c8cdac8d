package ratelimit

import (
	"context"
	"sync/atomic"
	"time"
)

// StoreTimeout bounds every call to a [Leaser]: long
// enough for a few round trips on a local network on a busy machine, short
// enough that a store gone slow costs a request no more than a DNS lookup
// (ADR 203). A call that fails or runs out of time is answered from local
// state.
const StoreTimeout = 50 * time.Millisecond

// storeRetryAfter is how long a store that failed is left alone before the
// next call tries it again, so a store that is gone costs one deadline a
// second at most, not one per request.
const storeRetryAfter = time.Second

// A Leaser keeps rate-limit quotas where several processes can reach
// them, so a fleet on one API key paces as one client ([SharedPacer]).
// Quotas are named by key (the host, or the host and the quota's name); the
// leaser decides when each request may be sent, on its own clock, and hands
// out permits in leases so a process does not pay a round trip per request.
// What a response said travels with the next call, its age measured by the
// caller, so no two clocks have to agree.
//
// Implementations must honour ctx's deadline and be safe for concurrent use.
// An error means "answer locally": requests are then paced by the
// process's own [Pacer] alone until the leaser answers again.
type Leaser interface {
	TakeQuota(ctx context.Context, key string, c LeaseCall) (Lease, error)
}

// LeaseCall is one call to a [Leaser]: permits wanted (0: only record
// what was seen), when Observed the latest quota a response reported, seen
// Age before the call, and permits handed back.
type LeaseCall struct {
	Want     int
	Observed bool
	Seen     Quota
	Age      time.Duration
	// Returned permits of a lease for now, of the window Epoch names, are
	// handed back unused: a process that is done gives the fleet what it
	// will not send.
	Returned int
	Epoch    int64
	// Unleased counts the requests this process sent to the quota's host
	// before it knew of the quota, so without a permit: a fleet that
	// starts together sends them all before any answer says what remains.
	Unleased int
}

// Lease is a batch of permits: permit i (from 0) may be used from
// Start + i·Interval after the answer until TTL after that.
type Lease struct {
	Count    int
	Start    time.Duration // wait before the first permit; 0: now
	Interval time.Duration // between permits of a spaced release; 0: all at Start
	TTL      time.Duration // how long each permit stays valid once usable
	Epoch    int64         // the store's name for the window granted in
}

// storeGuard remembers that a store failed, so calls skip it for
// storeRetryAfter instead of paying its deadline on every request.
type storeGuard struct {
	downUntil atomic.Int64 // Unix nanoseconds; 0: up
}

func (g *storeGuard) usable(now time.Time) bool {
	d := g.downUntil.Load()
	return d == 0 || now.UnixNano() >= d
}

func (g *storeGuard) result(err error, now time.Time) {
	if err != nil {
		g.downUntil.Store(now.Add(storeRetryAfter).UnixNano())
		return
	}
	if g.downUntil.Load() != 0 {
		g.downUntil.Store(0)
	}
}

func storeContext(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	return context.WithTimeout(context.WithoutCancel(parent), StoreTimeout)
}

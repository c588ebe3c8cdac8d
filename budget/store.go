package budget

import (
	"context"
	"sync/atomic"
	"time"
)

// StoreTimeout bounds every call to a [Store]: long
// enough for a few round trips on a local network on a busy machine, short
// enough that a store gone slow costs a request no more than a DNS lookup
// (ADR 203). A call that fails or runs out of time is answered from local
// state.
const StoreTimeout = 50 * time.Millisecond

// storeRetryAfter is how long a store that failed is left alone before the
// next call tries it again, so a store that is gone costs one deadline a
// second at most, not one per request.
const storeRetryAfter = time.Second

// A Store keeps the shared part of a [Budget] where several processes
// can reach it, so a fleet has one retry budget rather than one per process.
// Its bucket follows the same arithmetic as the in-process one, on the
// store's own clock: no time of the calling process is passed in, so
// processes whose clocks disagree share one budget correctly.
//
// Implementations must honour ctx's deadline and be safe for concurrent use.
// An error means "answer locally": the Budget then runs on its in-process
// bucket until the store answers again.
type Store interface {
	TakeBudget(ctx context.Context, r Take) (Lease, error)
}

// Take is one call to a [Store]: first attempts to credit,
// leased re-sends handed back unused, and re-sends wanted.
type Take struct {
	Ratio, MinPerSecond, MaxTokens float64 // the Budget's parameters, defaults applied
	Deposits                       int64   // first attempts since the last call
	Returned                       int     // leased re-sends that expired unused
	Want                           int     // re-sends wanted now (0: only credit)
}

// Lease is what a [Store] granted: Granted re-sends, usable for
// TTL from the answer.
type Lease struct {
	Granted int
	TTL     time.Duration
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

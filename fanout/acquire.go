package fanout

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/retry"
)

type gateKey struct{}

// Acquire takes one slot of the gate the fan-out put in ctx, for a fetch that
// does not send through a [retry.Transport] (which takes a slot per attempt
// by itself). It waits for the slot, credits the wait to the item's
// [liveness.Tracker] (queuing is not silence), and returns a context to do
// the work with and the function that gives the slot back; calling release
// more than once is harmless. The returned context carries no gate, so a
// retry transport used under it does not take a second slot. Outside a
// fan-out, Acquire returns ctx and does nothing.
//
// On cancellation Acquire returns ctx's own error, and release is a no-op.
func Acquire(ctx context.Context) (_ context.Context, release func(), err error) {
	gate, _ := ctx.Value(gateKey{}).(*semaphore.Weighted)
	if gate == nil {
		return ctx, func() {}, nil
	}
	queued := time.Now()
	if err := gate.Acquire(ctx, 1); err != nil {
		return ctx, func() {}, err
	}
	if t := liveness.From(ctx); t != nil {
		t.Credit(time.Since(queued))
	}
	var none *semaphore.Weighted
	inner := retry.WithGate(context.WithValue(ctx, gateKey{}, none), none)
	var once sync.Once
	return inner, func() { once.Do(func() { gate.Release(1) }) }, nil
}

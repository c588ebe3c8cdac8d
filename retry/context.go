package retry

import (
	"context"
	"time"

	"golang.org/x/sync/semaphore"
)

type (
	gateKey     struct{}
	overrideKey struct{}
	outcomeKey  struct{}
)

// WithGate returns a context whose requests acquire one unit of gate for each
// attempt and release it when the attempt ends. A call sleeping off a backoff
// holds no slot, and the time spent queuing for one is credited to the stall
// budget: waiting for a slot is not silence. Fan-outs put one gate in every
// item's context to bound the attempts in flight.
func WithGate(ctx context.Context, gate *semaphore.Weighted) context.Context {
	return context.WithValue(ctx, gateKey{}, gate)
}

func gateFrom(ctx context.Context) *semaphore.Weighted {
	g, _ := ctx.Value(gateKey{}).(*semaphore.Weighted)
	return g
}

// WithOverride returns a context whose requests use the transport's policy as
// changed by edit. Edits stack: an inner WithOverride applies after the
// outer ones. The changed policy is validated like any other; an invalid one
// fails the request before anything is sent.
func WithOverride(ctx context.Context, edit func(*Policy)) context.Context {
	if prev, ok := ctx.Value(overrideKey{}).(func(*Policy)); ok {
		outer := edit
		edit = func(p *Policy) { prev(p); outer(p) }
	}
	return context.WithValue(ctx, overrideKey{}, edit)
}

// WithMaxAttempts returns a context whose requests make at most n attempts;
// n = 1 disables retry for them.
func WithMaxAttempts(ctx context.Context, n int) context.Context {
	return WithOverride(ctx, func(p *Policy) { p.MaxAttempts = n })
}

// An Outcome records how one call went. Obtain one with [WithOutcome]; the
// transport fills it in before RoundTrip returns, whether it returned a
// response or an error.
type Outcome struct {
	// Attempts is the number of attempts sent.
	Attempts int
	// Stop is why retrying ended: nil when the last response was accepted
	// on its merits (a success, or a status the policy does not re-send),
	// else a stop reason such as ErrExhausted or ErrRetryAfter. It is set
	// for calls that returned the last 429 or 503 as a response, too.
	Stop error
	// Status is the last HTTP status seen, 0 if none.
	Status int
	// RetryAfter is the last server wait hint seen, 0 if none.
	RetryAfter time.Duration
	// Waited is the total time spent waiting between attempts and for a
	// rate-limit reset.
	Waited time.Duration
	// Cause is the last failure without a response, nil if none.
	Cause error
	// Resumes counts the continuations of a broken body with a Range
	// request. It and the fields above are updated while the caller reads
	// the body, so read them after the body ended.
	Resumes int
}

// WithOutcome returns a context that records the outcome of the call made
// with it. Use a fresh one per call.
func WithOutcome(ctx context.Context) (context.Context, *Outcome) {
	o := new(Outcome)
	return context.WithValue(ctx, outcomeKey{}, o), o
}

// OutcomeFrom returns the Outcome ctx records into, or nil; a layer above
// the transport uses it to share the caller's record instead of hiding it.
func OutcomeFrom(ctx context.Context) *Outcome { return outcomeFrom(ctx) }

func outcomeFrom(ctx context.Context) *Outcome {
	o, _ := ctx.Value(outcomeKey{}).(*Outcome)
	return o
}

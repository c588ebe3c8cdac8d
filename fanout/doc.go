// Package fanout runs many sub-requests with bounded concurrency and never
// lets a partial result pass for a complete one.
//
// [Run] calls a fetch function for every item of a list and returns the
// results in input order. The bound is on attempts in flight, not on items:
// a gate of [Options.Concurrency] slots (or a shared [Options.Gate]) travels
// in each item's context ([retry.WithGate]), and a [retry.Transport] takes a
// slot for each attempt and gives it back when the attempt ends. An item
// sleeping off a backoff therefore holds no slot, and the time it spends
// queuing for one is credited to its stall budget: waiting is not silence.
// Each item's context carries its own [liveness.Tracker], because each
// sub-request is its own call with its own budget. The goroutines are bounded
// too, at a few per slot, so a list of 100,000 items does not start 100,000
// of them. A fetch that does not send through the retry transport takes its
// slot with [Acquire].
//
// Without [Options.Independent], the first failure stops the items that
// have not finished, and the error follows one precedence: the caller's
// cancellation (returned as ctx.Err() itself) beats a fatal failure (an
// [*ItemError]), which beats transient ones. A run stopped by transient
// failures only (retries exhausted, stalled, rate limited past the policy's
// patience; see [retry.Transient]) returns an [*Interrupted]: it keeps the
// completed results, names the failed and unfinished items and the wait the
// server asked for, and [Interrupted.Resume] fetches only what is missing.
// [Interrupted.Save] and [Load] carry that state across processes in a JSON
// file tied to the item list by a digest. Code that does not know the type
// parameters tests for one with [IsInterrupted] or [AsInterruption].
//
// With [Options.Independent], for items that do not depend on one another,
// every item runs and the successes are returned together with a
// [*PartialError] listing each failure.
//
// A panic in a fetch function is not swallowed: the run stops, waits for the
// other items, and panics again in the caller's goroutine with a
// [*PanicError] that carries the original value and stack.
//
// For a 32-way fan-out over HTTP, give the underlying [net/http.Transport]
// a MaxIdleConnsPerHost of at least the concurrency: its default of 2 makes
// most requests open a new connection.
package fanout

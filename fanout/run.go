package fanout

import (
	"context"
	"errors"
	"github.com/steadyhttp/steady/credentials"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/retry"
)

// Run calls fetch for every item and returns the results in input order.
//
// Attempts in flight are bounded by a gate of opt.Concurrency slots (or
// opt.Gate) that each item's context carries ([retry.WithGate]): a
// [retry.Transport] takes a slot for each attempt and gives it back after, so
// an item sleeping off a backoff holds none. A fetch that does not send
// through that transport should take its slot with [Acquire]. Each item's
// context also carries a fresh [liveness.Tracker]: every item is its own call
// with its own stall budget.
//
// Run returns a nil error only when every item succeeded. Otherwise the first
// failure stops the items that have not finished, and the error is, in this
// order of precedence:
//   - the caller's cancellation: ctx.Err() itself, unwrapped;
//   - the first fatal failure (see [Options.Transient]), as an [*ItemError];
//   - else an [*Interrupted] that keeps the completed results and can resume
//     the rest ([IsInterrupted], [AsInterruption]).
//
// The results are nil with any error: a failed run never passes for a
// complete one. With [Options.Independent] no failure stops the others, and
// the successes come back with a [*PartialError] naming the failed items.
//
// A panic in fetch stops the other items and, once they have returned, is
// raised again in the caller's goroutine as a [*PanicError]; a fetch that
// calls runtime.Goexit makes Run call it too. Run leaves no goroutine
// behind.
func Run[T, R any](ctx context.Context, items []T, opt Options, fetch func(ctx context.Context, item T) (R, error)) ([]R, error) {
	j := &job[T, R]{
		items:   items,
		opt:     opt,
		fetch:   fetch,
		results: make([]R, len(items)),
		done:    make([]bool, len(items)),
	}
	return j.run(ctx)
}

// job is one run over an item list, possibly resuming an earlier one whose
// completed results are already in results and done.
type job[T, R any] struct {
	items     []T
	opt       Options
	fetch     func(context.Context, T) (R, error)
	results   []R
	done      []bool
	completed int // items done, from earlier runs included

	mu         sync.Mutex
	failures   []*ItemError
	fatal      *ItemError // the first fatal failure
	retryAfter time.Duration
	panicked   *PanicError
	goexit     bool
}

func (j *job[T, R]) run(ctx context.Context) ([]R, error) {
	slots, err := j.opt.slots()
	if err != nil {
		return nil, err
	}
	if j.fetch == nil {
		return nil, &OptionsError{Field: "fetch", Problem: "is nil"}
	}
	todo := make([]int, 0, len(j.items)-j.completed)
	for i, d := range j.done {
		if !d {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return j.results, nil
	}
	gate := j.opt.Gate
	if gate == nil {
		gate = semaphore.NewWeighted(int64(slots))
	}

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	workers := len(todo)
	if slots <= workers/workersPerSlot {
		workers = slots * workersPerSlot
	}
	for range workers {
		wg.Go(func() {
			for runCtx.Err() == nil {
				k := int(next.Add(1) - 1)
				if k >= len(todo) || !j.one(runCtx, stop, gate, todo[k]) {
					return
				}
			}
		})
	}
	wg.Wait()
	return j.outcome(ctx)
}

// one runs item i. It reports false when fetch (or the Reporter or
// Transient function it led to) panicked or called runtime.Goexit; the run
// is then stopped.
func (j *job[T, R]) one(ctx context.Context, stop context.CancelCauseFunc, gate *semaphore.Weighted, i int) (ok bool) {
	returned := false
	defer func() {
		if returned {
			return
		}
		v := recover() // nil: runtime.Goexit, which carries on after this
		j.mu.Lock()
		if v == nil {
			j.goexit = true
		} else if j.panicked == nil {
			j.panicked = &PanicError{Index: i, Value: v, Stack: debug.Stack()}
		}
		j.mu.Unlock()
		stop(errAborted)
	}()
	ictx := context.WithValue(retry.WithGate(ctx, gate), gateKey{}, gate)
	ictx = liveness.With(ictx, liveness.New())
	r, err := j.fetch(ictx, j.items[i])
	j.finish(ctx, stop, i, r, err) // calls the Reporter and Transient: user code too
	returned = true
	return true
}

// errAborted is the cause the run's context carries when a fetch panicked.
var errAborted = errors.New("fanout: a fetch panicked")

// finish records item i's result or failure.
func (j *job[T, R]) finish(ctx context.Context, stop context.CancelCauseFunc, i int, r R, err error) {
	if err == nil {
		j.mu.Lock()
		j.results[i], j.done[i] = r, true
		j.completed++
		done := j.completed
		j.mu.Unlock()
		event.Emit(j.opt.Reporter, event.Event{Kind: event.SubrequestDone, Done: done, Total: len(j.items), Context: ctx})
		return
	}
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		return // stopped by the run or its caller, not a failure of its own
	}
	// Secrets in an item's error never reach the run's error text or a
	// saved state; errors.Is and errors.As still reach the cause.
	fe := &ItemError{Index: i, Err: credentials.NewRedactor(j.opt.Secrets...).Error(err)}
	transient := j.opt.transient(err)
	j.mu.Lock()
	j.failures = append(j.failures, fe)
	if transient {
		j.retryAfter = max(j.retryAfter, retryAfterOf(err))
	} else if j.fatal == nil {
		j.fatal = fe
	}
	j.mu.Unlock()
	if !j.opt.Independent {
		stop(fe)
	}
}

// outcome applies the precedence once every worker has returned.
func (j *job[T, R]) outcome(ctx context.Context) ([]R, error) {
	if j.panicked != nil {
		panic(j.panicked)
	}
	if j.goexit {
		runtime.Goexit()
	}
	if j.completed == len(j.items) {
		return j.results, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(j.failures, func(a, b *ItemError) int { return a.Index - b.Index })
	if j.opt.Independent {
		return j.results, &PartialError{Failed: j.failures, Total: len(j.items)}
	}
	if j.fatal != nil {
		return nil, j.fatal
	}
	return nil, j.interrupted()
}

// interrupted returns the resumable state of a run stopped by transient
// failures.
func (j *job[T, R]) interrupted() *Interrupted[T, R] {
	// The secrets are kept behind a pointer: printed with %#v, the error
	// shows its address, never the values.
	opt, secrets := j.opt, j.opt.Secrets
	opt.Secrets = nil
	in := &Interrupted[T, R]{
		Completed:  make(map[int]R, j.completed),
		Failures:   j.failures,
		Failed:     indexes(j.failures),
		total:      len(j.items),
		retryAfter: j.retryAfter,
		items:      j.items,
		opt:        opt,
		secrets:    &secrets,
		fetch:      j.fetch,
	}
	failed := 0
	for i, d := range j.done {
		switch {
		case d:
			in.Completed[i] = j.results[i]
		case failed < len(in.Failed) && in.Failed[failed] == i:
			failed++
		default:
			in.Unfinished = append(in.Unfinished, i)
		}
	}
	return in
}

package fanout

import (
	"context"
	"fmt"
	"github.com/steadyhttp/steady/credentials"
	"strings"
	"time"
)

// Interrupted is the error of a run stopped by transient failures only: the
// retries ran out, the stall budget was spent, or the server asked to wait
// longer than the policy would. It keeps everything the run completed, so
// [Interrupted.Resume] fetches only what is missing, and it can be saved to a
// file ([Interrupted.Save], [Load]) to resume after the process exits.
//
// Its fields describe the run; Resume does not change them, so the same
// Interrupted may be resumed more than once.
type Interrupted[T, R any] struct {
	// Completed holds the result of every item completed so far, by index
	// into the item list, from earlier runs included.
	Completed map[int]R
	// Failed lists the items that failed, in index order; Failures holds
	// their errors in the same order.
	Failed   []int
	Failures []*ItemError
	// Unfinished lists the items that neither completed nor failed: never
	// started, or stopped when the first failure ended the run.
	Unfinished []int

	total      int
	retryAfter time.Duration
	items      []T
	opt        Options // without its Secrets, which are in secrets
	secrets    *credentials.Secrets
	fetch      func(context.Context, T) (R, error)
}

// An Interruption is what every [*Interrupted] is, whatever its type
// parameters, for code that handles one without naming them. See
// [AsInterruption].
type Interruption interface {
	error
	// Progress returns how many items are completed, of how many.
	Progress() (done, total int)
	// Missing returns the indexes of the items not completed, in order.
	Missing() []int
	// RetryAfter returns the longest wait a server asked for, 0 if none.
	RetryAfter() time.Duration
	// Save writes the completed state to a file; see [Interrupted.Save].
	Save(path string) error
}

var _ Interruption = (*Interrupted[int, int])(nil)

// IsInterrupted reports whether err is, or wraps, an [*Interrupted]: a run
// stopped by transient failures that can resume.
func IsInterrupted(err error) bool {
	_, ok := AsInterruption(err)
	return ok
}

// AsInterruption finds the [*Interrupted] in err's chain, as an
// [Interruption]. Unlike errors.As it does not look inside an [*ItemError],
// so a nested fan-out's interruption reported as one item's failure is not
// taken for the run's own. To resume, assert the type the run used:
//
//	in, ok := fanout.AsInterruption(err)
//	if ok {
//		res, err = in.(*fanout.Interrupted[Query, Rows]).Resume(ctx)
//	}
func AsInterruption(err error) (Interruption, bool) {
	switch e := err.(type) {
	case nil, *ItemError:
		return nil, false
	case Interruption:
		return e, true
	case interface{ Unwrap() error }:
		return AsInterruption(e.Unwrap())
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if in, ok := AsInterruption(inner); ok {
				return in, true
			}
		}
	}
	return nil, false
}

func (e *Interrupted[T, R]) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fanout: interrupted with %d of %d items done", len(e.Completed), e.total)
	if len(e.Failed) > 0 {
		fmt.Fprintf(&b, ", %d failed", len(e.Failed))
		writeFirst(&b, e.Failures)
	}
	if len(e.Unfinished) > 0 {
		fmt.Fprintf(&b, ", %d not finished", len(e.Unfinished))
	}
	if e.retryAfter > 0 {
		fmt.Fprintf(&b, "; the server asked to wait %v", e.retryAfter.Round(time.Millisecond))
	}
	return b.String()
}

// Unwrap returns the failures, so errors.Is and errors.As see each of them.
func (e *Interrupted[T, R]) Unwrap() []error { return unwrapAll(e.Failures) }

// Retryable reports true: resuming later may succeed. It makes a nested
// fan-out's interruption a transient failure of the outer one.
func (e *Interrupted[T, R]) Retryable() bool { return true }

// RetryAfter returns the longest wait among the failures: a [retry.Error]'s
// RetryAfter or pacing Wait, or an error's RetryAfter method (as
// steady.RateLimitError and breaker.Error have), 0 if none.
// Resuming sooner is likely to be refused again.
func (e *Interrupted[T, R]) RetryAfter() time.Duration { return e.retryAfter }

// Progress returns how many items are completed, of how many.
func (e *Interrupted[T, R]) Progress() (done, total int) { return len(e.Completed), e.total }

// Missing returns the indexes of the items not completed, in order.
func (e *Interrupted[T, R]) Missing() []int {
	missing := make([]int, 0, e.total-len(e.Completed))
	for i := range e.total {
		if _, ok := e.Completed[i]; !ok {
			missing = append(missing, i)
		}
	}
	return missing
}

// Resume runs the missing items with the fetch function and options of the
// interrupted run and returns the full result, in input order, as an
// uninterrupted run would have. Its errors are [Run]'s; if it is interrupted
// again the new [*Interrupted] holds everything completed by both runs. An
// Interrupted obtained from [Load] has no fetch function: use
// [Interrupted.ResumeWith].
func (e *Interrupted[T, R]) Resume(ctx context.Context) ([]R, error) {
	if e.fetch == nil {
		return nil, &OptionsError{Field: "fetch", Problem: "is nil: a state read by Load is resumed with ResumeWith"}
	}
	opt := e.opt
	if e.secrets != nil {
		opt.Secrets = *e.secrets
	}
	return e.ResumeWith(ctx, opt, e.fetch)
}

// ResumeWith is [Interrupted.Resume] with the given options and fetch
// function, for a state read by [Load] or to resume with, say, a lower
// concurrency.
func (e *Interrupted[T, R]) ResumeWith(ctx context.Context, opt Options, fetch func(ctx context.Context, item T) (R, error)) ([]R, error) {
	j := &job[T, R]{
		items:     e.items,
		opt:       opt,
		fetch:     fetch,
		results:   make([]R, e.total),
		done:      make([]bool, e.total),
		completed: len(e.Completed),
	}
	for i, r := range e.Completed {
		if i < 0 || i >= e.total {
			return nil, &OptionsError{Field: "Completed", Problem: fmt.Sprintf("holds index %d, outside the %d items", i, e.total)}
		}
		j.results[i], j.done[i] = r, true
	}
	return j.run(ctx)
}

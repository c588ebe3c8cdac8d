package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Stop reasons. A call that ends without a usable response returns an
// [*Error] whose Reason is one of these; [Outcome.Stop] records the same for
// calls that returned a response.
var (
	// ErrExhausted: every allowed attempt was used.
	ErrExhausted = errors.New("attempts exhausted")
	// ErrStalled: the no-progress budget was spent.
	ErrStalled = errors.New("stalled: no data within the stall budget")
	// ErrNotRetryable: the failure, the method or the body could not be
	// re-sent.
	ErrNotRetryable = errors.New("not retryable")
	// ErrRetryAfter: the server asked for a wait longer than MaxRetryAfter.
	ErrRetryAfter = errors.New("server asked to wait longer than MaxRetryAfter")
	// ErrBudget: the shared retry budget refused the re-send.
	ErrBudget = errors.New("retry budget exhausted")
	// ErrRateLimited: pacing would have to hold the request past
	// MaxRetryAfter for the host's quota to reset.
	ErrRateLimited = errors.New("rate limited until a reset beyond MaxRetryAfter")
	// ErrOverload: overload control ([Policy.Overload]) refused the attempt:
	// the host's circuit is open, or the throttle shed a first attempt.
	// The reason also matches the breaker's cause ([breaker.ErrOpen],
	// [breaker.ErrThrottled]), and errors.As finds its [*breaker.Error],
	// whose RetryAfter says when the host may be tried again.
	ErrOverload = errors.New("refused by overload control")
	// ErrDeadline: the next wait (a backoff, a Retry-After or a pacing
	// hold) could not end before the context's deadline, so it was not
	// started. errors.Is(ErrDeadline, context.DeadlineExceeded) holds.
	ErrDeadline error = deadlineError{}
)

type deadlineError struct{}

func (deadlineError) Error() string { return "the next wait would outlast the context's deadline" }

func (deadlineError) Is(target error) bool { return target == context.DeadlineExceeded }

// Error is the evidence of a call that ended without a response: how many
// attempts were made, why retrying stopped, and the last cause. Use
// errors.Is with the stop reasons and with the cause, errors.As for the
// cause's type.
type Error struct {
	Method   string
	URL      string // redacted
	Attempts int
	Reason   error // one of the stop reasons (errors.Is)
	// Status is the last HTTP status seen, 0 when no attempt got one.
	Status int
	// RetryAfter is the server's last wait hint, 0 when there was none.
	RetryAfter time.Duration
	// Wait is how long the request would have had to be held (pacing).
	Wait time.Duration
	Err  error // the last cause
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %v after %d attempt", e.Method, e.URL, e.Reason, e.Attempts)
	if e.Attempts != 1 {
		b.WriteByte('s')
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (server asked to wait %v)", e.RetryAfter.Round(time.Millisecond))
	}
	if e.Wait > 0 {
		fmt.Fprintf(&b, " (quota resets in %v)", e.Wait.Round(time.Millisecond))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the stop reason and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Reason}
	}
	return []error{e.Reason, e.Err}
}

// redactedError keeps a cause's type for errors.As while scrubbing its text
// of the request's URL, which lower layers sometimes quote with its query.
type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

func redactCause(err error, raw, redacted string) error {
	if err == nil || raw == redacted {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, raw) {
		return err
	}
	return &redactedError{err: err, text: strings.ReplaceAll(msg, raw, redacted)}
}

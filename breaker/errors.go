package breaker

import (
	"errors"
	"fmt"
	"time"
)

// Causes of a refusal, for errors.Is.
var (
	// ErrOpen: the host's circuit is open, or half-open with its probes
	// already in flight.
	ErrOpen = errors.New("circuit open")
	// ErrThrottled: the adaptive throttle rejected a first attempt.
	ErrThrottled = errors.New("throttled")
)

// Error is a refusal to send: its cause (ErrOpen or ErrThrottled), the host,
// and how long to wait before the host may be tried again.
type Error struct {
	Host string
	Err  error
	Wait time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("breaker: %s: %v; try again in %v", e.Host, e.Err, e.Wait)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// RetryAfter returns how long to wait before the host may be tried again,
// as of the refusal: the interface fan-out and the command read.
func (e *Error) RetryAfter() time.Duration { return e.Wait }

// Retryable reports true: the same call may succeed later, so a fan-out
// counts the refusal as transient and can resume.
func (e *Error) Retryable() bool { return true }

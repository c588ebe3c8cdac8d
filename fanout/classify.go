package fanout

import (
	"errors"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// transientReasons are the retry stop reasons a later run could get past:
// the attempts or the patience ran out, not the request's right to succeed.
var transientReasons = []error{
	retry.ErrExhausted,
	retry.ErrStalled,
	retry.ErrRetryAfter,
	retry.ErrBudget,
	retry.ErrRateLimited,
}

// IsTransient is the default classification of an item's failure: true when
// err matches (errors.Is) one of the retry stop reasons [retry.ErrExhausted],
// [retry.ErrStalled], [retry.ErrRetryAfter], [retry.ErrBudget] or
// [retry.ErrRateLimited], or when an error in its chain has a
// Retryable() bool method that returns true (the facade's status errors, an
// [*Interrupted] of a nested fan-out). Everything else is fatal, including
// [retry.ErrNotRetryable] and a context error the fan-out did not cause.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	for _, reason := range transientReasons {
		if errors.Is(err, reason) {
			return true
		}
	}
	var r interface{ Retryable() bool }
	return errors.As(err, &r) && r.Retryable()
}

// retryAfterOf returns the server's wait hint that err carries: the
// RetryAfter of a [*retry.Error] or the result of a RetryAfter() method in
// its chain, whichever is longer; 0 when there is none.
func retryAfterOf(err error) time.Duration {
	var d time.Duration
	var re *retry.Error
	if errors.As(err, &re) {
		d = re.RetryAfter
	}
	var h interface{ RetryAfter() time.Duration }
	if errors.As(err, &h) {
		d = max(d, h.RetryAfter())
	}
	return d
}

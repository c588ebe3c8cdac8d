package fanout

import (
	"errors"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// retryAfterOf returns the wait err carries: the server's hint or the
// pacing hold of a [*retry.Error], or the result of a RetryAfter() method
// in its chain, whichever is longest; 0 when there is none.
func retryAfterOf(err error) time.Duration {
	var d time.Duration
	var re *retry.Error
	if errors.As(err, &re) {
		d = max(re.RetryAfter, re.Wait)
	}
	var h interface{ RetryAfter() time.Duration }
	if errors.As(err, &h) {
		d = max(d, h.RetryAfter())
	}
	return d
}

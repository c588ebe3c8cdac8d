package fanout

import (
	"errors"
	"time"

	"github.com/steadyhttp/steady/retry"
)

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

package fanout

import (
	"fmt"

	"golang.org/x/sync/semaphore"

	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/retry"
)

// workersPerSlot is how many items run at once for each slot of the gate.
// An item sleeping off a backoff holds no slot, so with exactly one item per
// slot that slot would idle through every backoff; a few more items than
// slots keep the gate busy, while the goroutines stay bounded however long
// the item list is.
const workersPerSlot = 4

// Options configure a fan-out. The zero value is useful: every zero field
// means the documented default.
type Options struct {
	// Concurrency bounds the attempts in flight: the size of the gate the
	// fan-out makes (0: 32, config.DefaultConcurrent). It also sizes the
	// pool of goroutines that run items: 4 per slot, at most one per item.
	// Negative is invalid.
	Concurrency int

	// Gate, when set, is used instead of a gate of Concurrency slots, so
	// several fan-outs (or a whole client) can share one bound on attempts
	// in flight. Set Concurrency to the gate's size so the goroutine pool
	// matches it.
	Gate *semaphore.Weighted

	// Independent makes a failed item not fail the whole: every item is
	// run, the successes are returned, and a [*PartialError] lists each
	// failure. Without it, the first failure stops the run (see [Run]).
	Independent bool

	// Transient reports whether an item's failure could succeed when tried
	// again later (nil: [retry.Transient]). A run that stops on transient
	// failures only returns an [*Interrupted] that can resume; a fatal
	// failure is returned as it is.
	Transient func(error) bool

	// Reporter receives a event.SubrequestDone event each time an item
	// completes: Done items of Total, counting items completed by earlier
	// runs of a resumed fan-out (nil: none).
	Reporter event.Reporter
	// Secrets are values, such as API keys, that must appear in no error
	// text and no saved state: wherever an item's error holds one, as
	// written, escaped or in base64, it reads [credentials.Redacted]
	// ([credentials.Redactor]). The client fills it in. Empty strings are
	// ignored.
	Secrets credentials.Secrets
}

// OptionsError reports an invalid [Options] field or argument, by name.
type OptionsError struct {
	Field   string
	Problem string
}

func (e *OptionsError) Error() string { return "fanout: invalid options: " + e.Field + " " + e.Problem }

// slots returns the concurrency the options ask for, with its default.
func (o *Options) slots() (int, error) {
	switch {
	case o.Concurrency < 0:
		return 0, &OptionsError{Field: "Concurrency", Problem: fmt.Sprintf("is %d; want 0 (default) or more", o.Concurrency)}
	case o.Concurrency == 0:
		return config.DefaultConcurrent, nil
	}
	return o.Concurrency, nil
}

func (o *Options) transient(err error) bool {
	if o.Transient != nil {
		return o.Transient(err)
	}
	return retry.Transient(err)
}

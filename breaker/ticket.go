package breaker

import (
	"context"
	"time"
)

// Outcome is what an attempt's answer says about the host. The caller
// classifies; the breaker never looks at errors or statuses.
type Outcome uint8

const (
	// Success: an answer that shows the host serving (2xx, 3xx).
	Success Outcome = iota + 1
	// Failure: a 5xx or a timeout the caller's classification calls
	// transient. Only failures open a circuit and feed the throttle.
	Failure
	// Limited: a 429 without quota headers. It halves the concurrency
	// limit; it is never a failure.
	Limited
	// Paced: a 429 or a quota refusal with quota headers. The pacer owns
	// it; the breaker only frees the attempt's place.
	Paced
	// Neutral: an answer that says nothing about the host's health or rate
	// (a 4xx other than 429).
	Neutral
	// Abandoned: no answer (the caller's context ended, the attempt was
	// never sent). Nothing is counted.
	Abandoned
)

// A Ticket is one admitted attempt. Its methods may be called from one
// goroutine at a time.
type Ticket struct {
	b     *Breaker
	e     *entry
	at    time.Time
	hold  time.Duration
	first bool
	probe bool
	slot  bool
	done  bool
	gen   uint64
	cuts  uint64
}

// Hold returns how long to wait before sending, so that sends to a host
// that answered 429 without headers are spaced; 0 for most.
func (t *Ticket) Hold() time.Duration { return t.hold }

// Probe reports whether the attempt is a half-open circuit's probe.
func (t *Ticket) Probe() bool { return t.probe }

// Acquire waits for a slot under the host's concurrency limit, or until
// ctx ends, when it returns ctx's error. [Ticket.Done] frees the slot.
func (t *Ticket) Acquire(ctx context.Context) error {
	if t.slot || t.done {
		return nil
	}
	cuts, err := t.e.acquire(ctx, t.b)
	if err != nil {
		return err
	}
	t.slot, t.cuts = true, cuts
	return nil
}

// Done reports the attempt's outcome at now, with the Retry-After the host
// sent (0 for none), and frees what the ticket held. An unknown outcome
// counts as [Abandoned]. Calls after the first do nothing.
func (t *Ticket) Done(now time.Time, o Outcome, retryAfter time.Duration) {
	if t.done {
		return
	}
	t.done = true
	if o < Success || o > Abandoned {
		o = Abandoned // an outcome the breaker does not know tells it nothing
	}
	b, e := t.b, t.e
	var changes []Change
	b.mu.Lock()
	if t.slot {
		e.release()
	}
	if t.probe {
		e.probeVerdict(now, t, o, retryAfter, &b.cfg, &changes)
	} else {
		e.recordCircuit(now, t, o, retryAfter, &b.cfg, &changes)
	}
	e.recordThrottle(now, t, o)
	switch o {
	case Success:
		e.grow(now, &b.cfg, &changes)
	case Limited:
		// One cut a call, as one vote a call: its re-sends are already
		// backed off by its retry, and a limiter's closed window refuses
		// them at any rate, so cutting again for each would space the
		// sends far wider than the limit once the window reopens.
		if t.first {
			e.cut(now, t, &b.cfg, &changes)
		}
	}
	b.mu.Unlock()
	b.emit(changes)
}

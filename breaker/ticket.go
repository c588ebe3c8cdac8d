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

	// its place in the quota learned from headerless 429s
	win     uint64 // the window it is booked in
	scout   bool   // it probes a closed window of unknown length
	polling bool   // not booked yet: it waits for a probe's verdict
	booked  bool   // as of Done: a re-send would be booked in a window
}

// Hold returns how long to wait before sending: until the window of the
// host's limiter it is booked in, when the host answered 429 without quota
// fields; 0 for most. After the hold, [Ticket.Rehold] says whether to wait
// more.
func (t *Ticket) Hold() time.Duration { return t.hold }

// Rehold returns how much longer to hold the attempt, as of now, once its
// hold is served: 0 for an attempt booked in a window. One that waited for
// the verdict of a probe of a closed window is booked now, or waits again
// when the window is still closed.
func (t *Ticket) Rehold(now time.Time) time.Duration {
	b := t.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if !t.polling || t.done {
		return 0
	}
	t.at = now
	t.hold = t.e.q.book(now, t)
	return t.hold
}

// Scout reports whether the attempt probes a closed window of a host whose
// headerless 429s have not yet shown how long its windows last. Its 429 is
// expected: a retry loop does not count it as a failed attempt, and bounds
// such probes by time instead.
func (t *Ticket) Scout() bool { return t.scout }

// Booked reports, once [Ticket.Done] was called, whether the host's
// headerless 429s come from a window the breaker knows or is learning (one
// that served a run of requests before it refused), so that the hold of a
// re-send's ticket is what spaces it: a retry loop then needs no backoff of
// its own. A host that refuses outright is not booked.
func (t *Ticket) Booked() bool { return t.booked }

// Probe reports whether the attempt is a half-open circuit's probe.
func (t *Ticket) Probe() bool { return t.probe }

// Acquire waits for a slot under the host's concurrency limit, or until
// ctx ends, when it returns ctx's error. [Ticket.Done] frees the slot. When
// a headerless 429 closed the ticket's window while it waited, it returns
// without a slot: [Ticket.Rehold] then books it again, and Acquire is
// called after that hold.
func (t *Ticket) Acquire(ctx context.Context) error {
	if t.slot || t.done {
		return nil
	}
	cuts, lost, err := t.e.acquire(ctx, t.b, t)
	if err != nil || lost {
		return err
	}
	t.slot, t.cuts = true, cuts
	return nil
}

// Sendable reports whether the ticket holds what sending needs: a slot,
// from [Ticket.Acquire]. False after an Acquire that found the ticket's
// window refused, which is to be held again.
func (t *Ticket) Sendable() bool { return t.slot }

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
	if e.q.done(now, t, o) {
		changes = append(changes, e.change(now, e.state))
	}
	t.booked = e.q.learns()
	switch o {
	case Success:
		e.grow(now, &b.cfg, &changes)
	case Limited:
		// One cut a call, as one vote a call: its re-sends are already
		// backed off by its retry, and a limiter's closed window refuses
		// them at any rate, so cutting again for each would space the
		// sends far wider than the limit once the window reopens.
		if t.first {
			e.cut(now, t, &changes)
		}
	}
	b.mu.Unlock()
	b.emit(changes)
}

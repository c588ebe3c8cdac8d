package breaker

import (
	"time"

	"github.com/steadyhttp/steady/event"
)

// State is a circuit's state.
type State uint8

const (
	// Closed: attempts go through; failures are counted.
	Closed State = iota
	// Open: attempts fail fast until the open delay ends.
	Open
	// HalfOpen: a bounded number of probes go through; the first verdict
	// closes or re-opens the circuit.
	HalfOpen
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "unknown"
}

// probeWait is the wait a half-open refusal carries: the probe's verdict
// is due within about a round trip, which the breaker does not know.
const probeWait = time.Second

// A Change reports a new circuit state (State differs from Prev) or a new
// concurrency limit or learned quota (State equals Prev).
type Change struct {
	Time      time.Time
	Host, Key string
	Prev      State
	State     State
	Wait      time.Duration // for Open: until probes are let through
	// Failures of Requests first attempts counted in the window opened the
	// circuit (for Open; both 0 when a failed probe re-opened it).
	Failures, Requests int
	Limit              int           // concurrency limit, 0 for none
	Quota              int           // sends a window of the host's limiter serves, 0 unknown
	Period             time.Duration // that window's length, 0 unknown
	Spacing            time.Duration // Period / Quota, 0 unknown
}

// Event returns c as an [event.BreakerChanged]: Reason the new state, or
// "limit" when only the limit or the quota changed. For "open", Wait is
// the time until probes and Done of Total the first attempts that failed
// (0 of 0: the probe failed); for "limit", Total is the concurrency limit,
// Done the learned quota and Wait its window. The key stays out of
// events: it may be derived from a credential.
func (c Change) Event() event.Event {
	e := event.Event{Kind: event.BreakerChanged, Time: c.Time, Host: c.Host, Reason: c.State.String()}
	switch {
	case c.State == c.Prev:
		e.Reason, e.Total, e.Done, e.Wait = "limit", c.Limit, c.Quota, c.Period
	case c.State == Open:
		e.Wait, e.Done, e.Total = c.Wait, c.Failures, c.Requests
	}
	return e
}

// admitCircuit decides whether the circuit lets an attempt through and
// whether it is a probe. Re-sends go through a closed circuit only.
func (e *entry) admitCircuit(now time.Time, cfg *Config, resend bool, changes *[]Change) (probe bool, err error) {
	switch e.state {
	case Closed:
		return false, nil
	case Open:
		if now.Before(e.openUntil) {
			return false, &Error{Host: e.host, Err: ErrOpen, Wait: e.openUntil.Sub(now)}
		}
		e.setState(now, HalfOpen, changes)
	}
	if resend || e.probes >= cfg.Probes {
		return false, &Error{Host: e.host, Err: ErrOpen, Wait: probeWait}
	}
	e.probes++
	return true, nil
}

// recordCircuit counts the verdict of an attempt that is not a probe:
// first attempts only, one vote per call, while the circuit that admitted
// it is still closed. A 429 or a neutral answer is no vote.
func (e *entry) recordCircuit(now time.Time, t *Ticket, o Outcome, retryAfter time.Duration, cfg *Config, changes *[]Change) {
	if !t.first || e.state != Closed || t.gen != e.gen || (o != Success && o != Failure) {
		return
	}
	var fail int
	if o == Failure {
		fail = 1
	}
	e.fails.add(now, tally{1, fail})
	s := e.fails.sum(now)
	if s.n >= cfg.MinRequests && float64(s.k) >= cfg.FailureRatio*float64(s.n) {
		e.trip = s
		e.open(now, retryAfter, cfg, changes)
	}
}

// probeVerdict closes or re-opens a half-open circuit on a probe's outcome:
// any answer but a failure shows the host serves (a 429 is the pacer's);
// an abandoned probe only frees its place.
func (e *entry) probeVerdict(now time.Time, t *Ticket, o Outcome, retryAfter time.Duration, cfg *Config, changes *[]Change) {
	e.probes--
	if e.state != HalfOpen || t.gen != e.gen || o == Abandoned {
		return
	}
	if o == Failure {
		e.reopens++
		e.trip = tally{}
		e.open(now, retryAfter, cfg, changes)
		return
	}
	e.reopens = 0
	e.fails.reset()
	e.setState(now, Closed, changes)
}

// open opens the circuit for the host's Retry-After when it sent one, else
// for OpenDelay doubled for each probe failed in a row; MaxOpenDelay bounds
// both.
func (e *entry) open(now time.Time, retryAfter time.Duration, cfg *Config, changes *[]Change) {
	e.openUntil = now.Add(openDelay(e.reopens, retryAfter, cfg))
	e.setState(now, Open, changes)
}

// openDelay is the open delay after n probes failed in a row.
func openDelay(n int, retryAfter time.Duration, cfg *Config) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, cfg.MaxOpenDelay)
	}
	d := cfg.OpenDelay
	for range n {
		if d >= cfg.MaxOpenDelay/2 {
			return cfg.MaxOpenDelay
		}
		d *= 2
	}
	return min(d, cfg.MaxOpenDelay)
}

func (e *entry) setState(now time.Time, s State, changes *[]Change) {
	prev := e.state
	e.state = s
	e.gen++
	*changes = append(*changes, e.change(now, prev))
}

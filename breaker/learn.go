package breaker

import "time"

// probeShare is the probe spacing while a closed window's length is
// unknown, as a share of the time since the window began: the reopening
// is seen at most an eighth of the window late, at the cost of a number of
// probes that grows with the logarithm of the window's length.
const probeShare = 8

// A quota is what a host that answers 429 without quota fields allows, read
// from its answers: the sends of one of its windows, and how long a window
// lasts. A limiter of that kind (a fixed window opened by the first request
// after the last one ended) serves a run of requests, refuses the rest of
// the window, and serves again once it ends; the first run and its
// reopening give the length, the successes of the run the count. Until the
// first headerless 429 it only notes when the first window began.
type quota struct {
	on     bool      // a headerless 429 was seen: the quota is learned and kept
	start  time.Time // when the current window began (may be ahead, when booked)
	id     uint64    // counts windows, so a late verdict is judged against its own
	sent   int       // sends booked in the current window
	served int       // successes of the current window
	closed bool      // a headerless 429 answered a send of the current window
	// the window before: its successes, and whether a 429 answered it
	prev       int
	prevClosed bool
	period     time.Duration
	limit      int           // sends a window; 0 while unknown
	probeAt    time.Time     // closed, length unknown: when the next probe may go
	probing    bool          // a probe is booked or in flight
	rtt        time.Duration // the last probe's round trip
	maxGap     time.Duration // bounds the probe spacing: Config.MaxSpacing
}

// book places an attempt admitted at now in a window and returns how long
// to hold it. While the length is unknown and the window closed, one
// ticket is the probe (held until the next probe time) and the others
// wait for its verdict: they poll with [Ticket.Rehold].
func (q *quota) book(now time.Time, t *Ticket) time.Duration {
	t.polling, t.scout = false, false
	switch {
	case !q.on && q.start.IsZero():
		q.start = now
	case q.period > 0 && q.roll(now):
		t.polling = true
		return q.start.Sub(now) + minGap
	case q.closed && q.served == 0:
		// A window that served nothing shows no quota to learn: the host
		// refuses outright, and the caller's backoff spaces its re-sends.
	case q.closed && !q.probing:
		q.probing, t.scout = true, true
		t.win = q.id
		return max(0, q.probeAt.Sub(now))
	case q.closed:
		t.polling = true
		return max(0, q.probeAt.Sub(now)) + max(minGap, 2*q.rtt)
	}
	q.sent++
	t.win = q.id
	return max(0, q.start.Sub(now))
}

// roll moves a learned quota's booking to the next window when the
// current one is over, refused, or fully booked, and reports whether the
// attempt must wait instead: the next window is booked in full already
// (bookings run at most one window ahead, so that every verdict is judged
// against its own window or the one before).
func (q *quota) roll(now time.Time) (wait bool) {
	end := q.start.Add(q.period)
	full := q.limit > 0 && q.sent >= q.limit
	switch {
	case !now.Before(end):
		q.newWindow(now)
	case !q.closed && !full:
	case q.start.After(now):
		return true
	default:
		// The window before this one is over: served in full and never
		// refused, it lets one more send into the next (additive increase).
		if !q.prevClosed && q.prev >= q.limit {
			q.limit++
		}
		q.newWindow(end)
	}
	return false
}

func (q *quota) newWindow(start time.Time) {
	q.prev, q.prevClosed = q.served, q.closed
	q.start, q.id, q.sent, q.served, q.closed = start, q.id+1, 0, 0, false
}

// done reads an attempt's verdict: successes count in their window, and a
// probe's success after a closed run learns the quota; a headerless 429
// closes its window, and cuts a learned quota it refutes. It reports
// whether the quota changed.
func (q *quota) done(now time.Time, t *Ticket, o Outcome) bool {
	if t.polling {
		return false // never sent
	}
	if t.scout {
		q.probing = false
		q.rtt = now.Sub(t.at.Add(t.hold))
	}
	switch o {
	case Success:
		return q.served1(t)
	case Limited:
		return q.refused(now, t)
	}
	return false
}

func (q *quota) served1(t *Ticket) bool {
	if t.win+1 == q.id {
		q.prev++ // a late success of the window before
		return q.raise(q.prev, q.prevClosed)
	}
	if t.win != q.id {
		return false
	}
	if !t.scout || !q.closed || q.period > 0 {
		q.served++
		return q.raise(q.served, q.closed)
	}
	// The probe found the window open again: the window that closed began
	// at q.start, the new one at the probe's send.
	// The length is the gap from one window's first send to the next's,
	// an upper bound; a round trip and a tick more keep a send at its end
	// from arriving before the limiter's own.
	sent := t.at.Add(t.hold)
	q.period, q.limit = sent.Sub(q.start)+q.rtt+minGap, max(1, q.served)
	q.newWindow(sent)
	q.sent, q.served = 1, 1
	return true
}

// raise undoes a cut that a refused window's late successes refute: a
// window that served n requests allows n, whatever was in flight when its
// 429 came.
func (q *quota) raise(served int, closed bool) bool {
	if !closed || q.period == 0 || served <= q.limit {
		return false
	}
	q.limit = served
	return true
}

func (q *quota) refused(now time.Time, t *Ticket) bool {
	changed := false
	q.on = true
	switch {
	case t.win+1 == q.id && q.period > 0:
		// A 429 of the window before: it let fewer through than booked.
		if !q.prevClosed && q.prev < q.limit {
			q.limit, changed = max(1, q.prev), true
		}
		q.prevClosed = true
		return changed
	case t.win != q.id:
		return changed
	}
	if q.period > 0 && !q.closed {
		switch {
		case q.served == 0 && !t.at.Add(t.hold).Before(q.start):
			// Refused at the window's first send: the window is longer than
			// learned, and the one before has not ended. Learn it again,
			// from where that one began.
			q.start = q.start.Add(-q.period)
			q.served, q.period, q.limit, changed = q.prev, 0, 0, true
		case q.served < q.limit:
			q.limit, changed = max(1, q.served), true
		}
	}
	q.closed = true
	if q.period == 0 {
		q.probeAt = later(q.probeAt, now.Add(q.spacing(now)))
	}
	return changed
}

// lost reports whether t, booked in a window but not yet sent, would meet
// its refusal: a headerless 429 closed that window while t waited.
func (q *quota) lost(t *Ticket) bool {
	if t.scout || t.polling || !q.learns() {
		return false
	}
	return t.win == q.id && q.closed || t.win+1 == q.id && q.prevClosed && q.period > 0
}

// learns reports whether a re-send is booked in a window: the quota is
// known, or its window is closed after serving some (being learned).
func (q *quota) learns() bool {
	return q.period > 0 || q.closed && q.served > 0
}

// spacing is the wait before the next probe of a closed window whose
// length is unknown: a share of the time since it began.
func (q *quota) spacing(now time.Time) time.Duration {
	return min(q.maxGap, max(minGap, now.Sub(q.start)/probeShare))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// spacingOf is the mean time between sends the learned quota allows, 0
// while it is unknown.
func (q *quota) spacingOf() time.Duration {
	if q.period <= 0 || q.limit <= 0 {
		return 0
	}
	return q.period / time.Duration(q.limit)
}

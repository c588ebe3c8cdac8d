package breaker

import "time"

// An entry is the state of one host and key.
type entry struct {
	host, key string
	used      time.Time

	// the circuit
	state     State
	gen       uint64 // counts state changes, so a late verdict is dropped
	fails     window // n attempts, k failures
	openUntil time.Time
	reopens   int   // probes failed in a row
	probes    int   // probes in flight
	trip      tally // the count that last opened it; zero after a failed probe

	// the throttle
	load window // n requests, k accepted

	// the concurrency limit and spacing
	limit    float64 // 0: no limit
	inflight int
	waiters  int
	wake     chan struct{} // closed and replaced when a slot may be free
	cuts     uint64        // counts cuts, so one window of 429s cuts once

	// the quota learned from headerless 429s
	q quota
}

func newEntry(host, key string, cfg *Config) *entry {
	return &entry{
		host:  host,
		key:   key,
		fails: newWindow(cfg.Window),
		load:  newWindow(cfg.ThrottleWindow),
		limit: float64(cfg.MaxConcurrency),
		wake:  make(chan struct{}),
		q:     quota{maxGap: cfg.MaxSpacing},
	}
}

// idle reports whether forgetting e loses nothing: closed, nothing in
// flight or waiting, no quota learned.
func (e *entry) idle() bool {
	return e.state == Closed && e.inflight == 0 && e.waiters == 0 && e.probes == 0 && !e.q.on
}

func (e *entry) change(now time.Time, prev State) Change {
	c := Change{Time: now, Host: e.host, Key: e.key, Prev: prev, State: e.state, Limit: int(e.limit),
		Quota: e.q.limit, Period: e.q.period, Spacing: e.q.spacingOf()}
	if e.state == Open {
		c.Wait = e.openUntil.Sub(now)
		c.Requests, c.Failures = e.trip.n, e.trip.k
	}
	return c
}

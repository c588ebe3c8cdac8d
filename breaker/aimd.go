package breaker

import (
	"context"
	"time"
)

// minGap is the least probe spacing and the margin a learned window
// length gets, for answers faster than the clock can tell.
const minGap = 10 * time.Millisecond

// grow is the additive increase after a success: the limit grows by one a
// limit's worth of successes (about one a round trip), up to
// MaxConcurrency.
func (e *entry) grow(now time.Time, cfg *Config, changes *[]Change) {
	if e.limit <= 0 {
		return
	}
	before := int(e.limit)
	e.limit += 1 / e.limit
	if cfg.MaxConcurrency > 0 {
		e.limit = min(e.limit, float64(cfg.MaxConcurrency))
	}
	if int(e.limit) != before {
		e.wakeAll()
		*changes = append(*changes, e.change(now, e.state))
	}
}

// cut is the multiplicative decrease after a headerless 429, once for the
// attempts sent since the last cut: those answered together come from one
// window of the server's limiter. The limit halves, down to 1 (the first
// cut of an unlimited host halves the attempts in flight). The rate is the
// learned quota's (learn.go), not the limit's.
func (e *entry) cut(now time.Time, t *Ticket, changes *[]Change) {
	if t.cuts != e.cuts {
		return
	}
	e.cuts++
	before := e.limit
	switch {
	case e.limit == 0:
		n := e.inflight
		if t.slot {
			n++ // its own slot, freed already
		}
		e.limit = max(1, float64(n/2))
	default:
		e.limit = max(1, float64(int(e.limit)/2))
	}
	if e.limit != before {
		*changes = append(*changes, e.change(now, e.state))
	}
}

// acquire waits for a slot under the limit, or for ctx to end, and
// returns the count of cuts as of the slot: the attempt is sent after
// those, so only a later window's 429 can be its own. A ticket whose
// window was refused while it waited takes no slot: lost is true, and it
// is to be booked again ([Ticket.Rehold]).
func (e *entry) acquire(ctx context.Context, b *Breaker, t *Ticket) (cuts uint64, lost bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return 0, false, err
		}
		if e.q.lost(t) {
			t.polling = true
			return 0, true, nil
		}
		if e.limit == 0 || e.inflight < int(e.limit) {
			e.inflight++
			return e.cuts, false, nil
		}
		wake := e.wake
		e.waiters++
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
		}
		b.mu.Lock()
		e.waiters--
	}
}

// release frees a slot.
func (e *entry) release() {
	e.inflight--
	e.wakeAll()
}

func (e *entry) wakeAll() {
	if e.waiters > 0 {
		close(e.wake)
		e.wake = make(chan struct{})
	}
}

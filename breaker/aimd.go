package breaker

import (
	"context"
	"time"
)

// minGap is the least spacing the first cut at limit 1 sets, for an
// attempt answered faster than the clock can tell.
const minGap = 10 * time.Millisecond

// gapSteps is how many successes undo the spacing of one cut.
const gapSteps = 16

// reserve returns how long an attempt admitted now is held so that sends
// are at least e.gap apart, and books its start.
func (e *entry) reserve(now time.Time) time.Duration {
	if e.gap == 0 {
		return 0
	}
	start := now
	if e.next.After(now) {
		start = e.next
	}
	e.next = start.Add(e.gap)
	return start.Sub(now)
}

// grow is the additive increase after a success: the spacing shrinks by a
// sixteenth of its last cut until it is gone, then the limit grows by one
// a limit's worth of successes (about one a round trip), up to MaxConcurrency.
func (e *entry) grow(now time.Time, cfg *Config, changes *[]Change) {
	switch {
	case e.gap > 0:
		e.gap = max(0, e.gap-e.cutGap/gapSteps)
		if e.gap == 0 {
			*changes = append(*changes, e.change(now, e.state))
		}
	case e.limit > 0:
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
}

// cut is the multiplicative decrease after a headerless 429, once for the
// attempts sent since the last cut: those answered together come from one
// window of the server's limiter. The limit halves (the first cut of an
// unlimited host halves the attempts in flight); at 1, the rate halves
// instead: sends are spaced twice the round trip (from the end of the
// attempt's hold to its verdict), then twice the spacing, up to MaxSpacing.
func (e *entry) cut(now time.Time, t *Ticket, cfg *Config, changes *[]Change) {
	if t.cuts != e.cuts {
		return
	}
	e.cuts++
	switch {
	case e.limit == 0:
		n := e.inflight
		if t.slot {
			n++ // its own slot, freed already
		}
		e.limit = max(1, float64(n/2))
	case e.limit >= 2:
		e.limit = max(1, float64(int(e.limit)/2))
	default:
		e.gap = min(cfg.MaxSpacing, max(2*e.gap, 2*now.Sub(t.at.Add(t.hold)), minGap))
		e.cutGap = e.gap
	}
	*changes = append(*changes, e.change(now, e.state))
}

// acquire waits for a slot under the limit, or for ctx to end, and
// returns the count of cuts as of the slot: the attempt is sent after
// those, so only a later window's 429 can be its own.
func (e *entry) acquire(ctx context.Context, b *Breaker) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if e.limit == 0 || e.inflight < int(e.limit) {
			e.inflight++
			return e.cuts, nil
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

package liveness

import (
	"context"
	"sync/atomic"
	"time"
)

// A Tracker records when data last arrived. The zero value has never seen
// data: its first [Tracker.Mark] starts it. [New] returns one started now. A Tracker is safe for concurrent use: the stamp is one atomic word,
// so marking progress on every body read costs no lock.
type Tracker struct {
	last     atomic.Int64 // unix nanoseconds of the last progress
	attempts atomic.Int64
	retries  atomic.Int64
	waited   atomic.Int64 // nanoseconds credited
}

// New returns a tracker whose stamp is now: a call starts with no silence.
func New() *Tracker {
	t := new(Tracker)
	t.last.Store(time.Now().UnixNano())
	return t
}

// NewSince returns a tracker whose stamp is start, for a call that began
// before its tracker was needed.
func NewSince(start time.Time) *Tracker {
	t := new(Tracker)
	t.last.Store(start.UnixNano())
	return t
}

// Mark records that data arrived now.
func (t *Tracker) Mark() {
	now := time.Now().UnixNano()
	for {
		old := t.last.Load()
		if old >= now || t.last.CompareAndSwap(old, now) {
			return
		}
	}
}

// Credit gives back d of waiting that was not silence: the stamp moves forward
// by d, but never past now.
func (t *Tracker) Credit(d time.Duration) {
	if d <= 0 {
		return
	}
	t.waited.Add(int64(d))
	now := time.Now().UnixNano()
	for {
		old := t.last.Load()
		next := old + int64(d)
		if next > now || next < old { // past now, or overflow
			next = now
		}
		if next <= old || t.last.CompareAndSwap(old, next) {
			return
		}
	}
}

// Silence returns how long it has been since data last arrived.
func (t *Tracker) Silence() time.Duration {
	d := time.Duration(time.Now().UnixNano() - t.last.Load())
	return max(d, 0)
}

// CountAttempt records one attempt sent on behalf of the call; retry says
// whether it was a re-send. The retrying transport calls it, so a page walk
// or fan-out sharing the tracker can report totals.
func (t *Tracker) CountAttempt(retry bool) {
	t.attempts.Add(1)
	if retry {
		t.retries.Add(1)
	}
}

// Attempts returns how many attempts were counted.
func (t *Tracker) Attempts() int64 { return t.attempts.Load() }

// Retries returns how many of the counted attempts were re-sends.
func (t *Tracker) Retries() int64 { return t.retries.Load() }

// Waited returns the waiting credited in all: what a rate measured over
// the call leaves out to tell how fast the work goes when it is not held.
func (t *Tracker) Waited() time.Duration { return time.Duration(t.waited.Load()) }

type trackerKey struct{}

// With returns a context that carries t.
func With(ctx context.Context, t *Tracker) context.Context {
	return context.WithValue(ctx, trackerKey{}, t)
}

// From returns the tracker ctx carries, or nil.
func From(ctx context.Context) *Tracker {
	t, _ := ctx.Value(trackerKey{}).(*Tracker)
	return t
}

// Ensure returns ctx and its tracker, adding a new one when ctx has none.
func Ensure(ctx context.Context) (context.Context, *Tracker) {
	if t := From(ctx); t != nil {
		return ctx, t
	}
	t := New()
	return With(ctx, t), t
}

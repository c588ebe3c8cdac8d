package breaker

import "time"

// A tally is what one bucket of a rolling window counts: attempts and, of
// them, the failures (circuit) or the accepted ones (throttle).
type tally struct{ n, k int }

// A window counts tallies over a rolling span of time, in fixed buckets: a
// bucket older than the span no longer counts.
type window struct {
	width time.Duration
	slots [buckets]struct {
		index int64 // the bucket's number since the epoch, by width
		tally
	}
}

func newWindow(span time.Duration) window { return window{width: span / buckets} }

// add counts t in the bucket of now.
func (w *window) add(now time.Time, t tally) {
	i := now.UnixNano() / int64(w.width)
	s := &w.slots[i%buckets]
	if s.index != i {
		s.index, s.tally = i, tally{}
	}
	s.n += t.n
	s.k += t.k
}

// sum returns the tallies of the buckets within the span ending at now.
func (w *window) sum(now time.Time) tally {
	i := now.UnixNano() / int64(w.width)
	var t tally
	for _, s := range w.slots {
		if s.index > i-buckets && s.index <= i {
			t.n += s.n
			t.k += s.k
		}
	}
	return t
}

// reset forgets every count.
func (w *window) reset() { *w = window{width: w.width} }

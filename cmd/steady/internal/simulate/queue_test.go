package simulate

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The calendar queue gives events in the order of a plain sort by time and
// then scheduling order, whether they fall in the current bucket, the ring
// or beyond it, and across long empty stretches.
func TestQueueOrder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		spread  time.Duration // how far ahead events are scheduled
		coarse  time.Duration // times are multiples of this, to force ties
		buckets int
	}{
		{"near", 20 * time.Millisecond, time.Microsecond, 64},
		{"ties", 50 * time.Millisecond, 10 * time.Millisecond, 64},
		{"beyond the ring", 30 * time.Second, time.Millisecond, 16},
		{"sparse", 10 * time.Minute, time.Second, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(1, 2))
			q := newQueue(5*time.Millisecond, c.buckets)
			type ref struct {
				at    time.Duration
				order int
			}
			var pending []ref
			var now time.Duration
			order := 0
			schedule := func() {
				at := now + time.Duration(r.Int64N(int64(c.spread)))
				at -= at % c.coarse
				at = max(at, now)
				q.push(at, 0, job{client: int32(order)})
				pending = append(pending, ref{at, order})
				order++
			}
			for range 50 {
				schedule()
			}
			popped := 0
			for q.len() > 0 {
				e, ok := q.pop()
				if !ok {
					t.Fatal("pop failed on a non-empty queue")
				}
				slices.SortStableFunc(pending, func(a, b ref) int { return int(a.at - b.at) })
				want := pending[0]
				pending = pending[1:]
				if e.at != want.at || int(e.client) != want.order {
					t.Fatalf("pop %d: got event %d at %v, want %d at %v", popped, e.client, e.at, want.order, want.at)
				}
				now = e.at
				popped++
				if order < 5000 {
					for range r.IntN(3) {
						schedule()
					}
				}
			}
			if len(pending) != 0 {
				t.Fatalf("%d events never came out", len(pending))
			}
			if _, ok := q.pop(); ok {
				t.Fatal("pop succeeded on an empty queue")
			}
			q.reset()
			q.push(time.Second, 3, job{client: 9})
			if e, ok := q.pop(); !ok || e.at != time.Second || e.kind() != 3 || e.client != 9 {
				t.Fatalf("after reset: got %+v, %v", e, ok)
			}
		})
	}
}

package simulate

import (
	"time"

	"github.com/steadyhttp/steady/breaker"
)

// event is one thing that happens at a virtual instant, with the state of
// the one job it concerns. A job has exactly one event pending at a time,
// so its state travels with the event instead of living in a table that
// every event would look up in a random place.
type event struct {
	at  time.Duration // since the start of the run
	tie uint64        // scheduling order (high 32 bits), then the kind
	job
}

// job is the state of a contending client, or of one logical request of
// the outage scenario.
type job struct {
	prevWait time.Duration   // the last wait taken before a re-send
	ticket   *breaker.Ticket // the attempt's admission by the client's breaker, or nil
	client   int32
	attempt  uint16 // attempts sent so far
	after    bool   // issued once the service was back
}

func (e *event) kind() uint8 { return uint8(e.tie) }

func less(a, b event) bool { return a.at < b.at || (a.at == b.at && a.tie < b.tie) }

// queue is the future of a run. Events come out in time order, ties in the
// order they were scheduled, so a run is a pure function of its seed. (The
// scheduling order wraps after 2^32 events; a run stays deterministic, only
// the order of two events at the same nanosecond could then differ.)
//
// It is a calendar queue: time is cut into buckets of a fixed width. Events
// of the current bucket sit in a small 4-ary heap; those of the next few
// thousand buckets are appended, unsorted, to a ring of slots, and heaped
// only when their bucket comes; anything further out waits in a second
// heap. The outage scenario schedules most events seconds ahead (backoff
// waits) and pops tens of millions of them; a single heap of a few hundred
// thousand events made each pop a chain of cache misses and took half the
// run (see the decision record on the event queue).
type queue struct {
	width   time.Duration
	cur     int64   // the current bucket
	near    []event // heap: events of buckets up to cur
	slots   [][]event
	pending int     // events in slots
	far     []event // heap: events beyond the ring
	seq     uint64
}

func newQueue(width time.Duration, slots int) *queue {
	return &queue{width: width, slots: make([][]event, slots)}
}

// reset empties the queue and rewinds it to time 0, keeping its memory.
func (q *queue) reset() {
	q.cur, q.near, q.pending, q.far, q.seq = 0, q.near[:0], 0, q.far[:0], 0
	for i := range q.slots {
		q.slots[i] = q.slots[i][:0]
	}
}

func (q *queue) len() int { return len(q.near) + q.pending + len(q.far) }

// push schedules an event of kind for j at a time not before the last
// event popped.
func (q *queue) push(at time.Duration, kind uint8, j job) {
	q.seq++
	e := event{at: at, tie: q.seq<<32 | uint64(kind), job: j}
	switch b := int64(at / q.width); {
	case b <= q.cur:
		q.near = heapPush(q.near, e)
	case b-q.cur <= int64(len(q.slots)):
		s := &q.slots[b%int64(len(q.slots))]
		*s = append(*s, e)
		q.pending++
	default:
		q.far = heapPush(q.far, e)
	}
}

// pop removes and returns the earliest event, and false when the queue is
// empty.
func (q *queue) pop() (event, bool) {
	if q.len() == 0 {
		return event{}, false
	}
	for len(q.near) == 0 {
		q.advance()
	}
	var e event
	q.near, e = heapPop(q.near)
	return e, true
}

// advance moves to the next bucket, or straight to the far heap's first
// when nothing is nearer, and gathers its events into the near heap.
func (q *queue) advance() {
	if q.pending == 0 && len(q.far) > 0 {
		q.cur = max(q.cur, int64(q.far[0].at/q.width)-1)
	}
	q.cur++
	s := &q.slots[q.cur%int64(len(q.slots))]
	for _, e := range *s {
		q.near = heapPush(q.near, e)
	}
	q.pending -= len(*s)
	*s = nil
	for len(q.far) > 0 && int64(q.far[0].at/q.width) <= q.cur {
		var e event
		q.far, e = heapPop(q.far)
		q.near = heapPush(q.near, e)
	}
}

// heapPush and heapPop keep h a 4-ary min-heap: shallower than a binary
// one, with the four children of a node in one or two cache lines.
func heapPush(h []event, e event) []event {
	h = append(h, e)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 4
		if !less(e, h[parent]) {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = e
	return h
}

func heapPop(h []event) ([]event, event) {
	top := h[0]
	last := h[len(h)-1]
	h = h[:len(h)-1]
	n := len(h)
	if n == 0 {
		return h, top
	}
	i := 0
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		child := first
		for c := first + 1; c < first+4 && c < n; c++ {
			if less(h[c], h[child]) {
				child = c
			}
		}
		if !less(h[child], last) {
			break
		}
		h[i] = h[child]
		i = child
	}
	h[i] = last
	return h, top
}

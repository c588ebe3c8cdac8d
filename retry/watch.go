package retry

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// watchdog bounds the silence of the reads of every body a Transport reads
// or hands over, with one timer for all of them (ADR 230). A read only
// stamps when it started (watched.begin) and, when its body is not listed
// yet, lists it. The timer, when it fires, closes the body of every read that
// has waited idle, drops the bodies no read is in progress on, and sleeps
// until the next read could expire; once the list is empty it is not set
// again, so nothing runs while no body is read.
type watchdog struct {
	mu     sync.Mutex
	head   *watched    // the listed bodies, linked through prev and next
	timer  *time.Timer // set to fire at due; nil: not set
	due    time.Time
	setFor time.Duration // what timer was set for
	gen    uint64        // counts the timers made, so that one stopped too late knows it
	// fake is set when the timer was made in a testing/synctest bubble,
	// whose clock is its own: the timer is dropped as soon as the list
	// empties, so that a transport used in one bubble after another never
	// keeps the timer of a bubble that ended.
	fake bool
}

// watch lists b, whose read has just stamped its start, at now, and sets
// the timer when it is not set or would fire too late for b.
func (w *watchdog) watch(b *watched, now time.Time) {
	w.mu.Lock()
	if !b.listed.Load() {
		b.prev, b.next = nil, w.head
		if w.head != nil {
			w.head.prev = b
		}
		w.head = b
		b.listed.Store(true)
	}
	switch {
	case w.timer == nil:
		w.set(b.idle, now)
	case w.fake != fakeClock(now):
		// A timer on another clock: the transport was used outside a
		// synctest bubble and now inside one, or the reverse. It is
		// abandoned, never stopped, since a bubble's timer may not be
		// touched from outside it. b alone is timed exactly; with others
		// listed, a scan at once sets the next timer.
		w.abandon()
		if w.head == b && b.next == nil {
			w.set(b.idle, now)
		} else {
			w.set(0, now)
		}
	case b.idle < w.setFor && now.Add(b.idle).Before(w.due):
		// Rare: a call whose override shortened ReadTimeout. Otherwise the
		// timer, set for setFor at most that long ago, fires before b's
		// read could expire, and sets itself again for it.
		w.timer.Stop()
		w.abandon()
		w.set(b.idle, now)
	}
	w.mu.Unlock()
}

// fakeClock reports whether now was read in a testing/synctest bubble,
// whose clock has no monotonic reading.
func fakeClock(now time.Time) bool { return now == now.Round(0) }

// set makes a timer that fires after d. A timer is made anew rather than
// reset, so that it belongs to the bubble, if any, of the read it is for;
// that happens once per idle period at most while bodies are read.
func (w *watchdog) set(d time.Duration, now time.Time) {
	w.gen++
	gen := w.gen
	w.timer = time.AfterFunc(d, func() { w.fire(gen) })
	w.due, w.setFor = now.Add(d), d
	w.fake = fakeClock(now)
}

// abandon forgets the timer: if it fires, or has begun to, it sees it is
// stale and does nothing.
func (w *watchdog) abandon() {
	w.timer = nil
	w.gen++
}

// unwatch takes b off the list: its body ended or was closed.
func (w *watchdog) unwatch(b *watched) {
	if !b.listed.Load() {
		return
	}
	w.mu.Lock()
	if b.listed.Load() {
		w.unlink(b)
		if w.head == nil && w.fake && w.timer != nil {
			w.timer.Stop()
			w.abandon()
		}
	}
	w.mu.Unlock()
}

func (w *watchdog) unlink(b *watched) {
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		w.head = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	}
	b.prev, b.next = nil, nil
	b.listed.Store(false)
}

// fire is the timer's function: it expires the reads that waited idle,
// drops the bodies nobody reads, and sets the timer for the next read that
// could expire.
func (w *watchdog) fire(gen uint64) {
	var expired []*watched
	w.mu.Lock()
	if gen != w.gen {
		w.mu.Unlock()
		return // stopped, and another timer set, after it began to fire
	}
	w.timer = nil
	next := time.Duration(-1)
	for b := w.head; b != nil; {
		following := b.next
		start := b.reading.Load()
		if start == 0 {
			// A read that begins now and still sees b listed does not
			// list it: it is kept for that read.
			b.listed.Store(false)
			if start = b.reading.Load(); start == 0 {
				w.unlink(b)
				b = following
				continue
			}
			b.listed.Store(true)
		}
		waited := time.Duration(b.now() - start)
		if waited >= b.idle {
			w.unlink(b)
			b.expired.Store(true)
			expired = append(expired, b)
		} else if left := b.idle - waited; next < 0 || left < next {
			next = left
		}
		b = following
	}
	if next >= 0 {
		w.set(next, time.Now())
	}
	w.mu.Unlock()
	// Closing the body makes net/http fail the read blocked on it at once.
	// It is done outside the lock, since a Close may take its time.
	for _, b := range expired {
		b.body.Close()
	}
}

// watched is one body's reads as the watchdog sees them.
type watched struct {
	idle    time.Duration
	born    time.Time    // the stamps' origin (monotonic)
	reading atomic.Int64 // when the read in progress started, ns since born + 1; 0: none
	listed  atomic.Bool  // on the watchdog's list; written under its lock
	expired atomic.Bool  // the watchdog closed the body under a read
	body    io.Closer    // what the watchdog closes when a read waits idle

	prev, next *watched // the watchdog's list, under its lock
}

// begin stamps the start of a read and lists b with wd when it is not
// listed. The stamp comes before the check: the watchdog drops a listed body
// only when, after unlisting it, it still sees no read in progress, so a
// read that finds b listed after stamping is seen by the watchdog.
func (b *watched) begin(wd *watchdog) {
	if !b.listed.Load() {
		// The first read, mostly: one clock reading serves the stamp and
		// the timer. It is read here, in the reading goroutine, so that the
		// timer's clock is the read's (a synctest bubble's or the real one).
		now := time.Now()
		b.reading.Store(int64(now.Sub(b.born)) + 1)
		wd.watch(b, now)
		return
	}
	b.reading.Store(b.now())
	if !b.listed.Load() { // dropped just before the stamp
		wd.watch(b, time.Now())
	}
}

// end marks the read over and reports whether the watchdog closed the
// body under it.
func (b *watched) end() (expired bool) {
	b.reading.Store(0)
	return b.expired.Swap(false)
}

func (b *watched) now() int64 { return int64(time.Since(b.born)) + 1 }

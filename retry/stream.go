package retry

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/steadyhttp/steady/liveness"
)

// streamBody is the body of a response handed to the caller to read. It
// bounds the silence of each read by [Policy.ReadTimeout], marks the call's
// tracker when data arrives, and, when the response can prove a
// continuation is the same body (a strong validator), continues a broken
// body with a Range request (see resume.go) so that the caller reads on.
type streamBody struct {
	c        call              // the call that produced the response, for continuations
	tr       *liveness.Tracker // marked when data arrives; nil: none
	attempts int               // attempts sent for this body so far
	// first is the response handed over until the first break, which
	// decides from it whether the body can be continued (ADR 232); nil
	// once decided. dataAt is, while tr is nil, when data last arrived
	// or, before any did, when the response was handed over (Unix ns):
	// the tracker a continuation needs starts there.
	first  *http.Response
	dataAt int64

	mu     sync.Mutex // guards rc and closed against Close and the watchdog
	rc     io.ReadCloser
	closed bool
	cancel context.CancelFunc // ends continuations in flight when the caller closes

	// w is the body's entry with the transport's watchdog (watch.go),
	// which closes the current body (via current) when a read waits idle.
	w watched

	res    resumeState
	broken error // a failure not yet acted on, delivered after the data read with it
	err    error // sticky: the body ended (io.EOF) or failed for good
}

// handOver prepares resp for the caller: progress on a shared tracker, the
// idle read timeout and resumption for a body the caller reads. A body the
// transport read inside the attempt is in memory already.
func (c *call) handOver(resp *http.Response, attempt int, shared, inAttempt bool) {
	if c.cont {
		return // the stream it continues takes the body; only its bytes are progress
	}
	if shared {
		c.tracker.Mark()
	}
	if inAttempt || resp.Body == nil || resp.Body == http.NoBody ||
		resp.StatusCode == http.StatusSwitchingProtocols { // a writable body, not a stream
		return
	}
	idle := max(c.p.ReadTimeout, 0)
	b := &streamBody{c: *c, attempts: attempt, rc: resp.Body}
	switch {
	case shared:
		b.tr = c.tracker
		b.first = resp
	case idle > 0:
		// Watched in any case: whether the body can be continued is decided
		// only if it breaks, so one read to its end never pays for it.
		b.first = resp
		b.dataAt = time.Now().UnixNano()
	default:
		// Nothing to watch: only a body that can be continued is wrapped,
		// so it is decided now; the others stay net/http's own.
		b.res = c.resumable(resp)
		if !b.res.possible() {
			return
		}
		if b.res.validator != "" {
			b.tr = liveness.New() // the stall budget of continuations measures from the first byte on
		}
	}
	b.w.idle = idle
	b.w.born = c.start // only the stamps' origin: any monotonic time will do
	b.w.body = (*current)(b)
	resp.Body = b
}

// decide settles, at the first break, whether the body can be continued,
// from the response as it was handed over (ADR 232), keeping what was
// counted of the body so far.
func (b *streamBody) decide() {
	res := b.c.resumable(b.first)
	b.first = nil
	res.offset, res.tail, res.tailLen = b.res.offset, b.res.tail, b.res.tailLen
	b.res = res
	if b.tr == nil && res.validator != "" {
		// As if marked at every arrival: the stall budget of continuations
		// measures from the last byte on.
		b.tr = liveness.NewSince(time.Unix(0, b.dataAt))
	}
}

func (b *streamBody) Read(p []byte) (int, error) {
	for {
		if b.err != nil {
			return 0, b.err
		}
		if cause := b.broken; cause != nil {
			b.broken = nil
			if b.first != nil {
				b.decide()
			}
			if err := b.continueAfter(cause); err != nil {
				b.err = err // io.EOF when the server proved the body complete
				b.closeCurrent()
				return 0, err
			}
			continue
		}
		n, err := b.readOnce(p)
		if st := &b.res; n > 0 && st.resumes > 0 && st.total >= 0 && st.offset+int64(n) > st.total {
			// A continuation sent more than the length its Content-Range
			// agreed on: the excess is not the body's.
			n = int(st.total - st.offset)
			st.offset += int64(n)
			b.err = b.refuse("the continuation sent more bytes than the body's length", http.StatusPartialContent, nil)
			b.closeCurrent()
			return n, nil
		}
		if n > 0 {
			if b.first != nil || b.res.validator != "" {
				b.res.keep(p[:n])
			}
			b.res.offset += int64(n)
			b.res.fails = 0
			if b.tr != nil {
				b.tr.Mark()
			} else if b.first != nil {
				b.dataAt = time.Now().UnixNano()
			}
		}
		switch {
		case err == nil:
			return n, nil
		case err == io.EOF && b.res.short():
			// A continuation's answer ended before the length every answer
			// agreed on: it is a break like any other.
			err = io.ErrUnexpectedEOF
		case err == io.EOF:
			b.err = io.EOF
			b.unwatch()
			return n, io.EOF
		}
		b.broken = err
		if n > 0 {
			return n, nil // the data first; the failure on the next read
		}
	}
}

// readOnce reads from the current body under the watchdog: a read that
// waits idle has its body closed under it, which net/http turns into a
// failed read at once.
func (b *streamBody) readOnce(p []byte) (int, error) {
	if b.w.idle <= 0 {
		return b.rc.Read(p)
	}
	b.w.begin(b.c.t.watch)
	n, err := b.rc.Read(p)
	if b.w.end() {
		return n, &ReadTimeoutError{After: b.w.idle}
	}
	return n, err
}

// current is what the watchdog closes: the body in use, not the stream,
// which may continue it.
type current streamBody

func (c *current) Close() error {
	b := (*streamBody)(c)
	b.mu.Lock()
	rc := b.rc
	b.mu.Unlock()
	return rc.Close()
}

// unwatch takes the body off the watchdog's list: it ended or was closed.
func (b *streamBody) unwatch() {
	if b.w.idle > 0 {
		b.c.t.watch.unwatch(&b.w)
	}
}

// closeCurrent closes the body in use after a failure, so its connection is
// not held while the caller decides what to do.
func (b *streamBody) closeCurrent() {
	b.unwatch()
	b.mu.Lock()
	rc := b.rc
	b.mu.Unlock()
	rc.Close()
}

// Close closes the body and ends any continuation in flight.
func (b *streamBody) Close() error {
	b.mu.Lock()
	b.closed = true
	rc, cancel := b.rc, b.cancel
	b.mu.Unlock()
	b.unwatch()
	if cancel != nil {
		cancel()
	}
	return rc.Close()
}

func (b *streamBody) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// swap makes next the body read from; it reports false, and closes next,
// when the caller closed the stream meanwhile.
func (b *streamBody) swap(next io.ReadCloser) bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		next.Close()
		return false
	}
	prev := b.rc
	b.rc = next
	b.mu.Unlock()
	prev.Close()
	return true
}

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
	c        call // the call that produced the response, for continuations
	idle     time.Duration
	tr       *liveness.Tracker // marked when data arrives; nil: none
	attempts int               // attempts sent for this body so far

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
	res := c.resumable(resp)
	if idle == 0 && !res.possible() && !shared {
		return // nothing to watch: the body stays net/http's own
	}
	b := &streamBody{c: *c, idle: idle, attempts: attempt, rc: resp.Body, res: res}
	b.w.idle = idle
	b.w.born = c.start // only the stamps' origin: any monotonic time will do
	b.w.body = (*current)(b)
	if shared {
		b.tr = c.tracker
	} else if res.validator != "" {
		b.tr = liveness.New() // the stall budget of continuations measures from the first byte on
	}
	resp.Body = b
}

func (b *streamBody) Read(p []byte) (int, error) {
	for {
		if b.err != nil {
			return 0, b.err
		}
		if cause := b.broken; cause != nil {
			b.broken = nil
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
			if b.res.validator != "" {
				b.res.keep(p[:n])
			}
			b.res.offset += int64(n)
			b.res.fails = 0
			if b.tr != nil {
				b.tr.Mark()
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
	if b.idle <= 0 {
		return b.rc.Read(p)
	}
	b.w.begin(b.c.t.watch)
	n, err := b.rc.Read(p)
	if b.w.end() {
		return n, &ReadTimeoutError{After: b.idle}
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
	if b.idle > 0 {
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

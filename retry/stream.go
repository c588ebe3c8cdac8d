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
// What only a continuation needs is allocated when one may be sent
// (resumption), so a body read to its end carries little.
type streamBody struct {
	t        *Transport
	from     origin            // the call that produced the response
	tr       *liveness.Tracker // marked when data arrives; nil: none
	attempts int               // attempts sent for this body so far
	// first is the response handed over until the first break, which
	// decides from it whether the body can be continued (ADR 232); nil
	// once decided. dataAt is, while tr is nil, when data last arrived
	// or, before any did, when the response was handed over, as a stamp of
	// the watch's (ns since w.born + 1, one monotonic clock reading): the
	// tracker a continuation needs starts there.
	first  *http.Response
	dataAt int64

	mu     sync.Mutex // guards rc, closed and r against Close and the watchdog
	rc     io.ReadCloser
	closed bool

	// offset counts the bytes delivered to the caller; tail holds the last
	// of them (tailLen, oldest first), which a continuation asks for again
	// and must send unchanged: a server that shifts the range or sends
	// other bytes under a true-looking Content-Range is caught at the seam.
	tailLen uint8
	offset  int64
	tail    [seamBytes]byte

	// w is the body's entry with the transport's watchdog (watch.go),
	// which closes the current body (via current) when a read waits idle.
	w watched

	r      *resumption // set once decided, nil before
	broken error       // a failure not yet acted on, delivered after the data read with it
	err    error       // sticky: the body ended (io.EOF) or failed for good
}

// origin is what a continuation needs of the call that produced the
// response; the call itself is rebuilt from it when one may be sent.
type origin struct {
	p      *Policy
	req    *http.Request
	ctx    context.Context
	out    *Outcome
	waited time.Duration
	actx   context.Context // the attempt's context a tracer gave, for events
}

// resumption is a body's state once it was decided whether it can be
// continued.
type resumption struct {
	c      call // the call that produced the response, for continuations
	res    resumeState
	cancel context.CancelFunc // ends continuations in flight when the caller closes; under streamBody.mu
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
	var res resumeState
	if idle == 0 && !shared {
		// Nothing to watch: only a body that can be continued is wrapped,
		// so it is decided now; the others stay net/http's own.
		if res = c.resumable(resp); !res.possible() {
			return
		}
	}
	b := &streamBody{t: c.t, attempts: attempt, rc: resp.Body,
		from: origin{p: c.p, req: c.req, ctx: c.ctx, out: c.out, waited: c.waited, actx: c.actx},
		// born is the stamps' origin, and the call's start for a continuation.
		w: watched{idle: idle, born: c.start}}
	switch {
	case shared:
		b.tr = c.tracker
		b.first = resp
	case idle > 0:
		// Watched in any case: whether the body can be continued is decided
		// only if it breaks, so one read to its end never pays for it.
		b.first = resp
		b.dataAt = b.w.now() // no data yet: the hand-over stands for it
	default:
		b.r = &resumption{c: b.from.call(b.t, c.start), res: res}
		if res.validator != "" {
			b.tr = liveness.New() // the stall budget of continuations measures from the first byte on
		}
	}
	b.w.body = (*current)(b)
	resp.Body = b
}

// call rebuilds the call o came from, which started at start, as far as a
// continuation needs it.
func (o *origin) call(t *Transport, start time.Time) call {
	return call{t: t, p: o.p, req: o.req, ctx: o.ctx, out: o.out, waited: o.waited, actx: o.actx, start: start}
}

// decide settles, at the first break, whether the body can be continued,
// from the response as it was handed over (ADR 232).
func (b *streamBody) decide() {
	r := &resumption{c: b.from.call(b.t, b.w.born)}
	r.res = r.c.resumable(b.first)
	b.first = nil
	b.mu.Lock()
	b.r = r
	b.mu.Unlock()
	if b.tr == nil && r.res.validator != "" {
		// As if marked at every arrival: the stall budget of continuations
		// measures from the last byte on.
		b.tr = liveness.NewSince(b.w.born.Add(time.Duration(b.dataAt - 1)))
	}
}

// keep records p, just delivered, as the body's last bytes.
func (b *streamBody) keep(p []byte) {
	if len(p) >= seamBytes {
		copy(b.tail[:], p[len(p)-seamBytes:])
		b.tailLen = seamBytes
		return
	}
	n := int(b.tailLen)
	old := min(seamBytes-len(p), n)
	copy(b.tail[:old], b.tail[n-old:n])
	copy(b.tail[old:], p)
	b.tailLen = uint8(old + len(p))
}

// short reports whether a continued body ended before its agreed length.
func (b *streamBody) short() bool {
	r := b.r
	return r != nil && r.res.resumes > 0 && r.res.total >= 0 && b.offset < r.res.total
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
		r := b.r
		if n > 0 && r != nil && r.res.resumes > 0 && r.res.total >= 0 && b.offset+int64(n) > r.res.total {
			// A continuation sent more than the length its Content-Range
			// agreed on: the excess is not the body's.
			n = int(r.res.total - b.offset)
			b.offset += int64(n)
			b.err = b.refuse("the continuation sent more bytes than the body's length", http.StatusPartialContent, nil)
			b.closeCurrent()
			return n, nil
		}
		if n > 0 {
			if b.first != nil || r != nil && r.res.validator != "" {
				b.keep(p[:n])
			}
			b.offset += int64(n)
			if r != nil {
				r.res.fails = 0
			}
			if b.tr != nil {
				b.tr.Mark()
			} else if b.first != nil {
				b.dataAt = b.w.now()
			}
		}
		if err == nil {
			return n, nil
		}
		if err == io.EOF {
			if !b.short() {
				b.err = io.EOF
				b.unwatch()
				return n, io.EOF
			}
			// A continuation's answer ended before the length every answer
			// agreed on: it is a break like any other.
			err = io.ErrUnexpectedEOF
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
	b.w.begin(b.t.watch)
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
		b.t.watch.unwatch(&b.w)
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
	rc := b.rc
	var cancel context.CancelFunc
	if b.r != nil {
		cancel = b.r.cancel
	}
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

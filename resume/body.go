package resume

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/retry"
)

// body is the body of a response handed to the caller to read. Each read
// is bounded by the policy's ReadTimeout ([liveness.BoundReads]), marks the
// tracker when data arrives, and, when the response proved a continuation
// can be checked (a strong validator), a broken body is continued with a
// Range request sent through [retry.Transport.Resend] so that the caller
// reads on.
type body struct {
	t    *Transport
	req  *http.Request     // the request the response answered
	ctx  context.Context   // the caller's
	p    retry.Policy      // the request's, for its bounds and events
	out  *retry.Outcome    // the caller's record of the call
	tr   *liveness.Tracker // marked when data arrives; nil: none
	idle time.Duration     // each read's bound; 0: none
	res  state
	brk  retry.Break // the re-sends since data last arrived

	attempts int           // attempts sent for this body so far
	waited   time.Duration // waits of the call and its continuations

	mu     sync.Mutex // guards rc, closed and cancel against Close
	rc     io.ReadCloser
	closed bool
	cancel context.CancelFunc // ends a continuation in flight when the caller closes

	// offset counts the bytes delivered to the caller; tail holds the last
	// of them (tailLen, oldest first), which a continuation asks for again
	// and must send unchanged: a server that shifts the range or sends
	// other bytes under a true-looking Content-Range is caught at the seam.
	tailLen int
	offset  int64
	tail    [seamBytes]byte

	broken error // a failure not yet acted on, delivered after the data read with it
	err    error // sticky: the body ended (io.EOF) or failed for good
}

func (b *body) Read(p []byte) (int, error) {
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
		n, err := b.rc.Read(p)
		if st := &b.res; n > 0 && st.resumes > 0 && st.total >= 0 && b.offset+int64(n) > st.total {
			// A continuation sent more than the length its Content-Range
			// agreed on: the excess is not the body's.
			n = int(st.total - b.offset)
			b.offset += int64(n)
			b.err = b.refuse("the continuation sent more bytes than the body's length", http.StatusPartialContent, nil)
			b.closeCurrent()
			return n, nil
		}
		if n > 0 {
			if b.res.validator != "" {
				b.keep(p[:n])
			}
			b.offset += int64(n)
			if b.offset-b.res.piece >= b.res.progressBytes() {
				b.brk.Failed = 0
			}
			if b.tr != nil {
				b.tr.Mark()
			}
		}
		if err == nil {
			return n, nil
		}
		if err == io.EOF {
			if !b.short() {
				b.err = io.EOF
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

// keep records p, just delivered, as the body's last bytes.
func (b *body) keep(p []byte) {
	if len(p) >= seamBytes {
		copy(b.tail[:], p[len(p)-seamBytes:])
		b.tailLen = seamBytes
		return
	}
	old := min(seamBytes-len(p), b.tailLen)
	copy(b.tail[:old], b.tail[b.tailLen-old:b.tailLen])
	copy(b.tail[old:], p)
	b.tailLen = old + len(p)
}

// short reports whether a continued body ended before its agreed length.
func (b *body) short() bool {
	return b.res.resumes > 0 && b.res.total >= 0 && b.offset < b.res.total
}

// continueAfter continues the body after cause broke it at the current
// offset, or returns the error the read fails with: the caller's
// cancellation, unwrapped; a [*retry.Error] when the policy ends retrying;
// an [*Error] when the continuation cannot be proven the same body; and
// io.EOF when the server says the body was already complete.
func (b *body) continueAfter(cause error) error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	if b.isClosed() {
		return cause
	}
	st := &b.res
	if st.validator == "" {
		if st.why == "" {
			return cause
		}
		return b.refuse(st.why, 0, cause)
	}
	ctx, ok := b.resumeContext()
	if !ok {
		return cause
	}
	b.brk.Err = cause
	for {
		k, overlap := b.offset, int64(b.tailLen)
		b.brk.Reason, b.brk.Bytes = event.WaitResume+" at byte "+strconv.FormatInt(k, 10), k
		b.brk.AtOnce = k-st.piece >= atOnceBytes
		resp, sub, err := b.t.next.Resend(b.rangeRequest(ctx, k-overlap), &b.brk)
		b.attempts += sub.Attempts
		b.waited += sub.Waited
		if err != nil {
			return b.notContinued(ctx, sub, err)
		}
		done, why := st.check(resp, k, k-overlap, b.p.RetryStatus)
		switch {
		case why != "":
			resp.Body.Close()
			return b.refuse(why, resp.StatusCode, b.brk.Err)
		case done:
			resp.Body.Close()
			b.record(nil, resp.StatusCode, nil)
			return io.EOF
		case resp.StatusCode != http.StatusPartialContent:
			// A status the policy re-sends, returned when retrying ended.
			resp.Body.Close()
			stop := sub.Stop
			if stop == nil {
				stop = retry.ErrExhausted
			}
			return b.fail(stop, resp.StatusCode, b.brk.Err)
		}
		if !b.swap(liveness.BoundReads(resp.Body, b.idle)) {
			return b.brk.Err
		}
		if overlap > 0 {
			seam := make([]byte, overlap)
			if _, err := io.ReadFull(b.rc, seam); err != nil {
				if cerr := b.ctx.Err(); cerr != nil {
					return cerr
				}
				b.brk.Err = err // broken again before the seam: another continuation
				continue
			}
			if !bytes.Equal(seam, b.tail[:b.tailLen]) {
				return b.refuse(fmt.Sprintf("the continuation's bytes %d-%d differ from those already received: the server sent other bytes than its Content-Range says",
					st.base+k-overlap, st.base+k-1), resp.StatusCode, b.brk.Err)
			}
		}
		st.resumes++
		st.piece = k
		b.record(nil, resp.StatusCode, nil)
		return nil
	}
}

// notContinued is the error a read fails with when no continuation could
// be sent, or none was answered: the caller's cancellation; the break
// itself when the caller closed the body meanwhile or the failure is not
// one a re-send survives; else the retry layer's error, which counts every
// attempt of the body.
func (b *body) notContinued(ctx context.Context, sub retry.Outcome, err error) error {
	if cerr := b.ctx.Err(); cerr != nil {
		return cerr
	}
	if ctx.Err() != nil {
		return b.brk.Err // closed by the caller meanwhile
	}
	var re *retry.Error
	if !errors.As(err, &re) {
		return err
	}
	re.Attempts = b.attempts
	b.record(sub.Stop, sub.Status, sub.Cause)
	return err
}

// rangeRequest is the request for the body from byte k on.
func (b *body) rangeRequest(ctx context.Context, k int64) *http.Request {
	st := &b.res
	req := b.req.Clone(ctx)
	req.Header.Set("Range", "bytes="+strconv.FormatInt(st.base+k, 10)+"-")
	req.Header.Set("If-Range", st.validator)
	req.Header.Set("Accept-Encoding", st.acceptEnc)
	return req
}

// resumeContext returns the context continuations are sent with: the
// caller's, ended also when the caller closes the body, and carrying the
// body's tracker so the continuation's own attempts measure the same
// silence.
func (b *body) resumeContext() (context.Context, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false
	}
	ctx, cancel := context.WithCancel(b.ctx)
	if b.cancel != nil {
		b.cancel()
	}
	b.cancel = cancel
	if liveness.From(ctx) != b.tr {
		ctx = liveness.With(ctx, b.tr)
	}
	return ctx, true
}

// refuse records and reports a body that will not be continued.
func (b *body) refuse(why string, status int, cause error) error {
	err := &Error{Method: method(b.req), URL: credentials.RedactURL(b.req.URL), Offset: b.offset, Reason: why, Status: status, Err: cause}
	b.record(ErrRefused, status, cause)
	b.emit(event.Event{Kind: event.Stopped, Attempt: b.attempts, Status: status,
		Err: errText(cause), Reason: ErrRefused.Error() + ": " + why})
	return err
}

// fail records and reports a continuation that ended on a status the policy
// re-sends.
func (b *body) fail(stop error, status int, cause error) error {
	b.record(stop, status, cause)
	b.emit(event.Event{Kind: event.Stopped, Attempt: b.attempts, Status: status, Err: errText(cause), Reason: stop.Error()})
	return &retry.Error{Method: method(b.req), URL: credentials.RedactURL(b.req.URL), Attempts: b.attempts, Reason: stop, Status: status, Err: cause}
}

// record updates the caller's outcome after a continuation.
func (b *body) record(stop error, status int, cause error) {
	out := b.out
	if out == nil {
		return // the caller keeps no outcome
	}
	out.Attempts = b.attempts
	out.Resumes = b.res.resumes
	out.Waited = b.waited
	if stop != nil || cause != nil {
		out.Stop, out.Cause = stop, cause
	}
	if status != 0 {
		out.Status = status
	}
}

// emit reports e with the fields every request event shares.
func (b *body) emit(e event.Event) {
	if b.p.Reporter == nil {
		return
	}
	e.Method = method(b.req)
	e.URL = credentials.RedactURL(b.req.URL)
	e.Host = b.req.URL.Host
	e.MaxAttempts = b.p.MaxAttempts
	e.Context = b.ctx
	event.Emit(b.p.Reporter, e)
}

// closeCurrent closes the body in use after a failure, so its connection is
// not held while the caller decides what to do.
func (b *body) closeCurrent() {
	b.mu.Lock()
	rc := b.rc
	b.mu.Unlock()
	rc.Close()
}

// Close closes the body and ends any continuation in flight.
func (b *body) Close() error {
	b.mu.Lock()
	b.closed = true
	rc, cancel := b.rc, b.cancel
	b.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return rc.Close()
}

func (b *body) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// swap makes next the body read from; it reports false, and closes next,
// when the caller closed the body meanwhile.
func (b *body) swap(next io.ReadCloser) bool {
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

func method(r *http.Request) string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

package retry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/liveness"
)

// ErrResumeRefused is the cause when a body broke mid-way and could not be
// continued without risking the bytes of two different answers spliced into
// one. The [*ResumeError] carrying it says why.
var ErrResumeRefused = errors.New("resume refused")

// ResumeError is a broken body that was not continued: the response offered
// no strong validator, or the answer to the Range request did not prove it
// continues the same body. errors.Is(err, ErrResumeRefused) holds, and the
// failure that broke the body is its Unwrap.
type ResumeError struct {
	Method string
	URL    string // redacted
	// Offset is how many bytes of the body the caller received; they are
	// good, the rest is missing.
	Offset int64
	// Reason says what was wrong, server-supplied text quoted.
	Reason string
	// Status is the status of the answer to the Range request, 0 when none
	// was sent.
	Status int
	// Err is the failure that broke the body.
	Err error
}

func (e *ResumeError) Error() string {
	s := fmt.Sprintf("%s %s: %v at byte %d: %s", e.Method, e.URL, ErrResumeRefused, e.Offset, e.Reason)
	if e.Err != nil {
		s += " (the body broke: " + e.Err.Error() + ")"
	}
	return s
}

// Is reports whether target is [ErrResumeRefused].
func (e *ResumeError) Is(target error) bool { return target == ErrResumeRefused }

// Unwrap returns the failure that broke the body.
func (e *ResumeError) Unwrap() error { return e.Err }

type noResumeKey struct{}

// WithoutResume returns a context whose responses are never continued with
// a Range request: a broken body fails the read with its own error, as
// net/http's would. [Policy.NoResume] does the same for every request.
func WithoutResume(ctx context.Context) context.Context {
	return context.WithValue(ctx, noResumeKey{}, true)
}

// resumeState is what a stream knows about resuming its body.
type resumeState struct {
	validator string // the If-Range value; "" when the body cannot be resumed
	why       string // why it cannot, for a refusal; "" when resuming does not apply
	etag      string // the strong ETag, when that is the validator
	encoding  string // the first answer's Content-Encoding
	acceptEnc string // the Accept-Encoding continuations send
	base      int64  // where the body starts in the resource: a caller's own "bytes=N-" answered 206
	total     int64  // the body's length as the answers agree on it, -1 unknown
	piece     int64  // the offset the current answer's new bytes began at
	fails     int    // failed attempts since data last arrived
	prevWait  time.Duration
	resumes   int
}

// seamBytes is how many delivered bytes a continuation repeats.
const seamBytes = 16

// atOnceBytes is how many new bytes an answer must have delivered before it
// broke for its continuation to be sent without a backoff (ADR 220): a
// break after that much progress is a lost connection, not a sign of a
// server that needs relief, and one request per MiB costs it little.
const atOnceBytes = 1 << 20

func (r *resumeState) possible() bool { return r.validator != "" || r.why != "" }

// resumable decides whether the body of resp, the response handed over, may
// be continued and with which validator: at its first break, or when it is
// handed over if nothing else would wrap it (ADR 232). Resuming applies to a plain GET
// answered 200, on by default; within that, a body without a strong
// validator, or one net/http decompressed, gets a reason to refuse instead.
func (c *call) resumable(resp *http.Response) resumeState {
	st := resumeState{total: resp.ContentLength}
	if st.total < 0 {
		st.total = -1
	}
	req := c.req
	if c.p.NoResume || (req.Method != "" && req.Method != http.MethodGet) {
		return st
	}
	switch rg := header(req.Header, "Range"); {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusPartialContent && rg != "":
		// The caller's own continuation ("bytes=N-", as steady get sends)
		// resumes too, when its answer is the rest of the resource.
		n, ok := openRange(rg)
		first, last, total, crOK := parseContentRange(header(resp.Header, "Content-Range"))
		if !ok || !crOK || first != n || total < 0 || last != total-1 {
			return st
		}
		st.base, st.total = n, total-n
	default:
		return st
	}
	if off, _ := c.ctx.Value(noResumeKey{}).(bool); off {
		return st
	}
	if resp.Uncompressed {
		st.why = "net/http decompressed the body in transit, and a range counts bytes of the encoded body " +
			"(send Accept-Encoding yourself, identity for a download, to make it resumable)"
		return st
	}
	st.encoding = header(resp.Header, "Content-Encoding")
	st.acceptEnc = header(req.Header, "Accept-Encoding")
	if st.acceptEnc == "" {
		// The first answer came unencoded without being asked; a
		// continuation must not be offered gzip, which net/http would
		// decompress and so shift every offset.
		st.acceptEnc = "identity"
	}
	etag := header(resp.Header, "Etag")
	if etag == "" && st.base > 0 && strongETag(header(req.Header, "If-Range")) {
		etag = header(req.Header, "If-Range") // the 206 was sent because the caller's ETag still holds
	}
	if strongETag(etag) {
		st.validator, st.etag = etag, etag
		return st
	}
	if lm := header(resp.Header, "Last-Modified"); lm != "" {
		mod, err := http.ParseTime(lm)
		if err != nil {
			st.why = "Last-Modified " + strconv.Quote(lm) + " is not an HTTP date"
			return st
		}
		// A date is a strong validator only when the body was last changed
		// at least a second before it was sent (RFC 9110, 8.8.2.2).
		if date, err := http.ParseTime(header(resp.Header, "Date")); err == nil && date.Sub(mod) < time.Second {
			st.why = "Last-Modified is within a second of Date, too recent to prove the body unchanged"
			return st
		}
		st.validator = lm
		return st
	}
	switch {
	case etag == "":
		st.why = "the response has no ETag or Last-Modified to prove a continuation is the same body"
	case strings.HasPrefix(etag, "W/"):
		st.why = "the response has only a weak ETag, which cannot guard a byte range"
	default:
		st.why = "the ETag " + strconv.Quote(etag) + " is malformed"
	}
	return st
}

// header is h.Get(key) for a key already in canonical form: it runs on
// every response handed over, and Get would canonicalize each key again.
func header(h http.Header, key string) string { return firstOf(h[key]) }

// strongETag reports whether v is a strong entity tag: a quoted string of
// RFC 9110 etagc characters.
func strongETag(v string) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		if c := v[i]; c == '"' || c < 0x21 || c == 0x7f {
			return false
		}
	}
	return true
}

// resumeReason is the reason of the RetryScheduled event before a broken
// body is continued at byte k.
func resumeReason(k int64) string {
	return event.WaitResume + " at byte " + strconv.FormatInt(k, 10)
}

// continueAfter continues the body after cause broke it at the current
// offset, or returns the error the read fails with: the caller's
// cancellation, unwrapped; an [*Error] when the policy ends retrying; a
// [*ResumeError] when the continuation cannot be proven the same body; and
// io.EOF when the server says the body was already complete.
func (b *streamBody) continueAfter(cause error) error {
	c, st := &b.r.c, &b.r.res
	if err := c.ctx.Err(); err != nil {
		return err
	}
	if b.isClosed() {
		return cause
	}
	if st.validator == "" {
		if st.why == "" {
			return cause
		}
		return b.refuse(st.why, 0, cause)
	}
	class, retryable := classify(cause, c.req)
	if !retryable {
		return cause
	}
	cause = redactCause(cause, c.req.URL.String(), c.redacted())
	ctx, ok := b.resumeContext()
	if !ok {
		return cause
	}
	p := c.p
	for {
		st.fails++ // the attempt whose body broke, or a continuation that failed
		k := b.offset
		var (
			stop error
			wait time.Duration
		)
		switch {
		case st.fails >= p.MaxAttempts:
			stop = ErrExhausted
		case st.fails == 1 && k-st.piece >= atOnceBytes:
			// The first continuation after a long enough piece replaces
			// the connection just lost, at once (ADR 220).
		default:
			wait = p.delay(st.fails, st.prevWait, p.Rand())
			// As for any re-send: the first is never withheld, later
			// ones must fit in the no-progress budget. Bytes received
			// restarted it.
			if st.fails >= 2 && p.StallTimeout > 0 && b.tr.Silence()+wait > p.StallTimeout {
				stop = ErrStalled
			}
		}
		// A wait that cannot end before the deadline is not started.
		if dl, ok := ctx.Deadline(); stop == nil && ok && wait > time.Until(dl) {
			stop = ErrDeadline
		}
		if stop == nil && p.Budget != nil && !p.Budget.Withdraw(time.Now()) {
			stop = ErrBudget
		}
		if stop != nil {
			return b.fail(stop, 0, cause)
		}
		if p.Reporter != nil {
			// Numbered like the attempts the policy bounds: those since data
			// last arrived, so a long download's fifth resume is not "5/4".
			c.emit(event.Event{Kind: event.RetryScheduled, Attempt: st.fails, ErrClass: class,
				Err: errText(cause), Wait: wait, Reason: resumeReason(k), Bytes: k})
		}
		if err := sleepCtx(ctx, wait); err != nil {
			if err := c.ctx.Err(); err != nil {
				return err
			}
			return cause // closed by the caller meanwhile
		}
		st.prevWait = wait
		c.waited += wait

		overlap := int64(b.tailLen)
		resp, sub, err := b.sendRange(ctx, k-overlap)
		b.attempts += sub.Attempts
		if err != nil {
			if cerr := c.ctx.Err(); cerr != nil {
				return cerr
			}
			var re *Error
			if errors.As(err, &re) {
				re.Attempts = b.attempts
			}
			b.record(sub.Stop, sub.Status, err)
			return err
		}
		st.fails += sub.Attempts - 1
		done, why := b.check(resp, k, k-overlap)
		switch {
		case why != "":
			discard(resp)
			return b.refuse(why, resp.StatusCode, cause)
		case done:
			discard(resp)
			b.record(nil, resp.StatusCode, nil)
			return io.EOF
		case resp.StatusCode != http.StatusPartialContent:
			// A status the policy re-sends, returned when retrying ended.
			discard(resp)
			stop := sub.Stop
			if stop == nil {
				stop = ErrExhausted
			}
			return b.fail(stop, resp.StatusCode, cause)
		}
		if !b.swap(resp.Body) {
			return cause
		}
		if overlap > 0 {
			seam := make([]byte, overlap)
			if _, err := io.ReadFull(readFunc(b.readOnce), seam); err != nil {
				if cerr := c.ctx.Err(); cerr != nil {
					return cerr
				}
				cause = err // broken again before the seam: another continuation
				continue
			}
			if !bytes.Equal(seam, b.tail[:b.tailLen]) {
				return b.refuse(fmt.Sprintf("the continuation's bytes %d-%d differ from those already received: the server sent other bytes than its Content-Range says",
					st.base+k-overlap, st.base+k-1), resp.StatusCode, cause)
			}
		}
		st.resumes++
		st.piece = k
		b.record(nil, resp.StatusCode, nil)
		return nil
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// sendRange sends the Range request for the body from byte k on,
// as a call of its own under the policy (attempts left, backoff,
// Retry-After, pacing, the gate and the budget), marking the stream's
// tracker.
func (b *streamBody) sendRange(ctx context.Context, k int64) (*http.Response, Outcome, error) {
	c, st := &b.r.c, &b.r.res
	req := c.req.Clone(ctx)
	req.Header.Set("Range", "bytes="+strconv.FormatInt(st.base+k, 10)+"-")
	req.Header.Set("If-Range", st.validator)
	req.Header.Set("Accept-Encoding", st.acceptEnc)
	p := *c.p
	p.MaxAttempts = max(c.p.MaxAttempts-st.fails, 1)
	var out Outcome
	sub := call{t: c.t, p: &p, req: req, ctx: ctx, out: &out, start: time.Now(), cont: true}
	resp, err := sub.run()
	return resp, out, err
}

// check decides whether resp, asked from byte from, continues the body
// broken at byte k: done when a 416 says the body ended exactly there, why
// when it cannot be trusted.
func (b *streamBody) check(resp *http.Response, k, from int64) (done bool, why string) {
	st := &b.r.res
	cr := resp.Header.Get("Content-Range")
	switch code := resp.StatusCode; {
	case code == http.StatusPartialContent:
	case code == http.StatusRequestedRangeNotSatisfiable:
		_, _, total, ok := parseContentRange(cr)
		if ok && total == st.base+k && (st.total < 0 || st.total == k) {
			return true, ""
		}
		return false, fmt.Sprintf("416 with Content-Range %s, but the body was broken at byte %d", strconv.Quote(cr), k)
	case code == http.StatusOK:
		return false, "the server answered 200 with the whole body: it changed since the first answer, or ignores Range"
	case b.r.c.p.RetryStatus(code):
		return false, ""
	default:
		return false, "the server answered " + strconv.Itoa(code) + " to the Range request"
	}
	first, last, total, ok := parseContentRange(cr)
	switch {
	case !ok || first < 0:
		return false, "206 with Content-Range " + strconv.Quote(cr) + ", not one byte range with its total"
	case first != st.base+from:
		return false, fmt.Sprintf("206 with Content-Range %s, which does not start at byte %d", strconv.Quote(cr), st.base+from)
	case total < 0:
		return false, "206 with Content-Range " + strconv.Quote(cr) + ", which does not say the total length"
	case st.total >= 0 && total != st.base+st.total:
		return false, fmt.Sprintf("206 with Content-Range %s, but the first answer was %d bytes long", strconv.Quote(cr), st.base+st.total)
	case last >= total:
		return false, "206 with Content-Range " + strconv.Quote(cr) + ", which ends past its own total"
	case resp.ContentLength >= 0 && resp.ContentLength != last-first+1:
		return false, fmt.Sprintf("206 with Content-Length %d, which contradicts its Content-Range %s", resp.ContentLength, strconv.Quote(cr))
	case resp.Uncompressed || resp.Header.Get("Content-Encoding") != st.encoding:
		return false, "206 with a Content-Encoding other than the first answer's"
	}
	if et := resp.Header.Get("Etag"); st.etag != "" && et != "" && et != st.etag {
		return false, fmt.Sprintf("206 with ETag %s, but the first answer had %s", strconv.Quote(et), strconv.Quote(st.etag))
	}
	st.total = total - st.base
	return false, ""
}

// openRange parses a Range header of one open-ended range, "bytes=N-".
func openRange(v string) (int64, bool) {
	rest, ok := strings.CutPrefix(v, "bytes=")
	if !ok {
		return 0, false
	}
	n, ok := strings.CutSuffix(rest, "-")
	if !ok {
		return 0, false
	}
	return decimal(n)
}

// parseContentRange parses "bytes first-last/total" and "bytes */total"
// (first and last -1), with total -1 for "*". Only plain decimal numbers
// that fit an int64 are accepted.
func parseContentRange(v string) (first, last, total int64, ok bool) {
	unit, rest, found := strings.Cut(v, " ")
	if !found || !strings.EqualFold(unit, "bytes") {
		return 0, 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, 0, false
	}
	total = -1
	if tot != "*" {
		if total, ok = decimal(tot); !ok {
			return 0, 0, 0, false
		}
	}
	if rng == "*" {
		return -1, -1, total, total >= 0
	}
	a, z, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, 0, false
	}
	if first, ok = decimal(a); !ok {
		return 0, 0, 0, false
	}
	if last, ok = decimal(z); !ok || last < first {
		return 0, 0, 0, false
	}
	return first, last, total, true
}

// decimal parses a non-negative decimal of at most 18 digits, nothing else
// around it, so it cannot overflow; it allocates nothing on bad input.
func decimal(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// resumeContext returns the context continuations are sent with: the
// call's, ended also when the caller closes the body, and carrying the
// stream's tracker so the continuation's own attempts measure the same
// silence.
func (b *streamBody) resumeContext() (context.Context, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false
	}
	ctx, cancel := context.WithCancel(b.r.c.ctx)
	if b.r.cancel != nil {
		b.r.cancel()
	}
	b.r.cancel = cancel
	if liveness.From(ctx) != b.tr {
		ctx = liveness.With(ctx, b.tr)
	}
	return ctx, true
}

// refuse records and reports a body that will not be continued.
func (b *streamBody) refuse(why string, status int, cause error) error {
	c := &b.r.c
	err := &ResumeError{Method: method(c.req), URL: c.redacted(), Offset: b.offset, Reason: why, Status: status, Err: cause}
	b.record(ErrResumeRefused, status, cause)
	if c.p.Reporter != nil {
		c.emit(event.Event{Kind: event.Stopped, Attempt: b.attempts, Status: status,
			Err: errText(cause), Reason: ErrResumeRefused.Error() + ": " + why})
	}
	return err
}

// fail records and reports a continuation the policy ended.
func (b *streamBody) fail(stop error, status int, cause error) error {
	c := &b.r.c
	b.record(stop, status, cause)
	if c.p.Reporter != nil {
		c.emit(event.Event{Kind: event.Stopped, Attempt: b.attempts, Status: status, Err: errText(cause), Reason: stop.Error()})
	}
	return &Error{Method: method(c.req), URL: c.redacted(), Attempts: b.attempts, Reason: stop, Status: status, Err: cause}
}

// record updates the caller's outcome after a continuation.
func (b *streamBody) record(stop error, status int, cause error) {
	out := b.r.c.out
	if out == nil {
		return
	}
	out.Attempts = b.attempts
	out.Resumes = b.r.res.resumes
	out.Waited = b.r.c.waited
	if stop != nil || cause != nil {
		out.Stop, out.Cause = stop, cause
	}
	if status != 0 {
		out.Status = status
	}
}

func method(r *http.Request) string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

package retry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/liveness"
)

// Transport is a retrying [http.RoundTripper]. Create one with [New]; it is
// safe for concurrent use, and cheap on the success path: no allocation
// beyond the wrapped transport's, about a hundred nanoseconds.
type Transport struct {
	next     http.RoundTripper
	raw      Policy // as given, for overrides
	policy   Policy // with defaults
	invalid  error
	pacer    Pacer
	policies policyCache // the last RateLimit-Policy read
	windows  windowCache // the last X-RateLimit window's limit read
	// watch bounds the reads of the bodies read or handed over. Its own
	// allocation: a timer left set past the last body keeps it, not the
	// transport, alive until it fires.
	watch *watchdog
}

var _ http.RoundTripper = (*Transport)(nil)

// New returns a Transport that sends through next under policy p. A nil next
// means a clone of [http.DefaultTransport]. An invalid policy is reported by
// every RoundTrip, before anything is sent; check it early with
// [Policy.Validate].
func New(next http.RoundTripper, p Policy) *Transport {
	if next == nil {
		next = http.DefaultTransport.(*http.Transport).Clone()
	}
	t := &Transport{next: next, raw: p, policy: p.withDefaults(), invalid: p.Validate(), watch: new(watchdog)}
	t.pacer.MaxHold = t.policy.MaxRetryAfter
	return t
}

// Policy returns the policy the transport was made with.
func (t *Transport) Policy() Policy { return t.raw }

// Next returns the wrapped transport.
func (t *Transport) Next() http.RoundTripper { return t.next }

// CloseIdleConnections closes the wrapped transport's idle connections.
// When [Policy.Quotas] or [Policy.Budget] is shared with other processes
// ([SharedPacer], [Budget.Store]), it first hands back the permits for now
// and the re-sends no request took, and credits the first attempts not yet
// told, so a program that is done leaves them to the rest of its fleet.
func (t *Transport) CloseIdleConnections() {
	if r, ok := t.policy.Quotas.(interface{ Release() }); ok {
		r.Release()
	}
	if b := t.policy.Budget; b != nil && b.Store != nil {
		b.shared.release(b)
	}
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip sends req, re-sending what the policy allows. It returns a
// response with a nil error whenever it obtained one, including the last
// retryable status when retrying ended; otherwise a nil response and an error:
// the context's own error after cancellation, or an [*Error].
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	p := &t.policy
	if edit, ok := ctx.Value(overrideKey{}).(func(*Policy)); ok {
		q := t.raw
		edit(&q)
		if err := q.Validate(); err != nil {
			closeRequestBody(req)
			return nil, err
		}
		q = q.withDefaults()
		p = &q
	} else if t.invalid != nil {
		closeRequestBody(req)
		return nil, t.invalid
	}
	c := call{t: t, p: p, req: req, ctx: ctx, out: outcomeFrom(ctx), start: time.Now()}
	return c.run()
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// call is the state of one logical request.
type call struct {
	t       *Transport
	p       *Policy
	req     *http.Request
	ctx     context.Context
	out     *Outcome
	start   time.Time
	tracker *liveness.Tracker
	waited  time.Duration
	cause   error  // the last failure without a response
	url     string // redacted, computed on first use
	cont    bool   // a Range request continuing a broken body (resume.go)
	// tracer is the Reporter when it is a event.Tracer; actx is the
	// context it gave the attempt in flight, nil between attempts.
	tracer event.Tracer
	actx   context.Context
}

// idempotentMethods are safe to re-send by their definition.
func idempotentMethod(m string) bool {
	switch m {
	case "", http.MethodGet, http.MethodHead, http.MethodPut,
		http.MethodDelete, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

func (c *call) run() (*http.Response, error) {
	p, req := c.p, c.req
	rep := p.Reporter
	if rep != nil {
		c.tracer, _ = rep.(event.Tracer)
	}
	c.tracker = liveness.From(c.ctx)
	// Body reads are progress only for a tracker someone else reads: one
	// shared through the context. A call's private tracker is done with
	// when its response goes back, so its body is left unwrapped.
	shared := c.tracker != nil
	bodyLimit, inAttempt := liveness.BodyInAttempt(c.ctx)
	gate := gateFrom(c.ctx)
	if gate != nil {
		c.ensureTracker()
	}

	// Whether a failed attempt may be re-sent at all, and why not. The
	// caller's Idempotency-Key is looked up only where it can change that:
	// it makes re-sendable a method the policy does not re-send, and spares
	// a method that is not idempotent the key generated, one for every
	// attempt, when the policy opts the method in.
	var idemKey string
	resendable := p.allowsMethod(req.Method)
	if idempotent := idempotentMethod(req.Method); !resendable || !idempotent {
		v := req.Header["Idempotency-Key"] // canonical already: no allocation, no folding
		callerKey := len(v) > 0 && v[0] != ""
		if resendable && !callerKey {
			idemKey = newIdempotencyKey()
		}
		resendable = resendable || callerKey
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	whyNot := ""
	switch {
	case !resendable:
		whyNot = "method " + req.Method + " is not idempotent and has no Idempotency-Key"
	case !replayable:
		whyNot = "the request body cannot be replayed (no GetBody)"
	}

	if p.Budget != nil && !c.cont {
		p.Budget.Deposit()
	}
	if rep != nil && !c.cont {
		c.emit(event.Event{Kind: event.RequestStarted})
	}
	host := req.URL.Host
	var route string
	if p.Pace {
		route = Route(req.URL.Path)
	}
	var prevWait time.Duration
	var sent time.Time

	for attempt := 1; ; attempt++ {
		// Pacing: a quota that is spent is waited out before sending. Later
		// attempts took their slot with the wait that preceded them.
		if p.Pace && attempt == 1 {
			if err := c.paceFirst(host, route); err != nil {
				return nil, err
			}
		}

		if gate != nil {
			queued := time.Now()
			if err := gate.Acquire(c.ctx, 1); err != nil {
				if attempt == 1 {
					closeRequestBody(req) // never handed to the inner transport
				}
				return nil, c.canceled(attempt-1, attempt > 1) // queued for a re-send: still waiting out the last failure
			}
			c.tracker.Credit(time.Since(queued))
		}
		if c.tracer != nil {
			c.startAttempt(attempt)
		}
		areq, err := c.attemptRequest(attempt, idemKey)
		if err != nil {
			if gate != nil {
				gate.Release(1)
			}
			c.finish(attempt-1, ErrNotRetryable, 0, 0, err)
			if rep != nil {
				c.emit(event.Event{Kind: event.Stopped, Attempt: attempt - 1, Err: errText(err),
					Reason: ErrNotRetryable.Error() + ": " + err.Error(), Stop: ErrNotRetryable})
			}
			return nil, &Error{Method: req.Method, URL: c.redacted(), Attempts: attempt - 1, Reason: ErrNotRetryable, Err: err}
		}
		if c.tracker != nil {
			c.tracker.CountAttempt(attempt > 1)
		}
		if p.Pace {
			sent = time.Now()
		}
		resp, err := c.t.next.RoundTrip(areq)
		if err == nil && resp == nil {
			err = fmt.Errorf("retry: %T returned neither a response nor an error", c.t.next)
		} else if err != nil && resp != nil {
			resp.Body.Close() // a broken RoundTripper; the error wins
			resp = nil
		}
		retryStatus := err == nil && (p.RetryStatus(resp.StatusCode) ||
			resp.StatusCode == http.StatusForbidden && rateLimit403(resp.Header))
		if inAttempt && err == nil && !retryStatus {
			var data []byte
			data, err = readInAttempt(resp, bodyLimit, p.ReadTimeout, c.t.watch, c.start, c.tracker)
			if err != nil {
				resp = nil
			} else {
				bb := &BufferedBody{data: data}
				bb.Reset(data)
				resp.Body = bb
				resp.ContentLength = int64(len(data))
			}
		}
		if gate != nil {
			gate.Release(1)
		}
		if err != nil && c.ctx.Err() != nil {
			return nil, c.canceled(attempt, false)
		}
		if err == nil && !retryStatus {
			// Accepted on its merits: a success or a status not re-sent.
			if (p.Pace || rep != nil) && c.acceptQuota(resp, attempt, route, sent, shared, inAttempt) {
				return resp, nil
			}
			c.handOver(resp, attempt, shared, inAttempt)
			c.finish(attempt, nil, resp.StatusCode, 0, nil)
			if rep != nil {
				c.emit(event.Event{Kind: event.RequestFinished, Attempt: attempt, Status: resp.StatusCode})
			}
			return resp, nil
		}

		// The attempt failed: decide whether to re-send, and after how long.
		var (
			status   int
			class    string
			hint     time.Duration
			hasHint  bool
			cause    error
			stop     error
			stopWhy  string
			canRetry = true
		)
		if err != nil {
			class, canRetry = classify(err, areq)
			cause = redactCause(err, req.URL.String(), c.redacted())
			c.cause = cause
			if !canRetry {
				stopWhy = class
			}
		} else {
			status = resp.StatusCode
			hint, hasHint = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
			if p.Pace || rep != nil || status == http.StatusForbidden {
				// A spent quota's reset is the hint of a refusal without a
				// Retry-After: with pacing on, and always for a 403, which
				// only a rate limit makes worth re-sending.
				q, at, ok := c.observeQuota(resp, route, sent)
				if ok && rep != nil {
					c.emit(event.Event{Kind: event.QuotaSeen, Time: at, Status: status, Remaining: q.Remaining, Reset: q.Reset})
				}
				if ok && !hasHint && (p.Pace || status == http.StatusForbidden) && q.Remaining == 0 && q.Reset > 0 {
					hint, hasHint = q.Reset, true // Retry-After takes precedence when both are given
				}
			}
		}
		switch {
		case !canRetry:
			stop = ErrNotRetryable
		case whyNot != "" && !(err != nil && replayable && neverSent(err)):
			stop, stopWhy = ErrNotRetryable, whyNot
		case attempt >= p.MaxAttempts:
			stop = ErrExhausted
		case hasHint && hint > p.MaxRetryAfter:
			stop = ErrRetryAfter
		}
		var wait time.Duration
		reason := event.WaitBackoff
		if stop == nil {
			if hasHint {
				wait, reason = serverWait(hint, p.Rand(), p.MaxBackoff, p.MaxRetryAfter), event.WaitServerHint
			} else {
				wait = p.delay(attempt, prevWait, p.Rand())
			}
			// The first re-send is never withheld, so one slow attempt cannot
			// disable retry; later ones must fit in the no-progress budget. A
			// wait the server named is not counted: it is credited once served.
			if attempt >= 2 && p.StallTimeout > 0 {
				planned := wait
				if hasHint {
					planned = 0
				}
				if c.ensureTracker().Silence()+planned > p.StallTimeout {
					stop = ErrStalled
				}
			}
		}
		// A wait that cannot end before the deadline is not started.
		now := time.Now()
		left, hasDeadline := c.left(now)
		if stop == nil && hasDeadline && wait > left {
			stop = ErrDeadline
		}
		if stop == nil && p.Budget != nil && !p.Budget.Withdraw(now) {
			stop = ErrBudget
		}
		// The re-send takes its pacing slot now, at the instant it would be
		// sent, so that a hold it cannot serve stops it with its response
		// still in hand.
		var hold time.Duration
		if stop == nil && p.Pace {
			limit := p.MaxRetryAfter
			if hasDeadline {
				limit = min(limit, left-wait)
			}
			h := c.quotas().Hold(host, route, now.Add(wait), limit)
			switch {
			case h.Refused && h.Wait > p.MaxRetryAfter:
				stop = ErrRateLimited
			case h.Refused:
				stop = ErrDeadline
			case h.Wait > 0:
				hold = c.holdWait(h, limit)
			}
		}

		if stop != nil {
			if hasHint {
				c.noteHint(hint)
			}
			c.finish(attempt, stop, status, hint, c.cause)
			if rep != nil {
				text := stop.Error()
				if stopWhy != "" {
					text += ": " + stopWhy
				}
				c.emit(event.Event{Kind: event.Stopped, Attempt: attempt, Status: status, ErrClass: class,
					Err: errText(cause), Reason: text, Wait: hint, Stop: stop})
			}
			if resp != nil {
				c.handOver(resp, attempt, shared, false)
				return resp, nil
			}
			return nil, &Error{Method: req.Method, URL: c.redacted(), Attempts: attempt, Reason: stop,
				Status: c.lastStatus(), RetryAfter: hint, Err: cause}
		}

		discard(resp) // drained and closed before the wait, never after
		if hasHint {
			c.noteHint(hint)
		}
		if status != 0 && c.out != nil {
			c.out.Status = status
		}
		if rep != nil {
			c.emit(event.Event{Kind: event.RetryScheduled, Attempt: attempt, Status: status, ErrClass: class,
				Err: errText(cause), Wait: wait, Reason: reason})
		}
		if hold > 0 && rep != nil {
			c.emit(event.Event{Kind: event.Waiting, Attempt: attempt + 1, Wait: hold, Reason: event.WaitRateLimited})
		}
		c.actx = nil // the attempt is over; the wait belongs to the request
		if err := c.sleep(wait + hold); err != nil {
			return nil, c.canceled(attempt, true)
		}
		prevWait = wait
		if hasHint {
			c.ensureTracker().Credit(wait)
		}
		if hold > 0 {
			c.ensureTracker().Credit(hold)
		}
	}
}

// attemptRequest returns the request for one attempt: the caller's own
// request when nothing about it changes, else a copy with a fresh body, the
// idempotency key, or the context a tracer gave the attempt. The caller's
// request is never modified.
func (c *call) attemptRequest(attempt int, idemKey string) (*http.Request, error) {
	req := c.req
	if attempt == 1 && idemKey == "" && c.actx == nil {
		return req, nil
	}
	ctx := c.ctx
	if c.actx != nil {
		ctx = c.actx
	}
	r := req.WithContext(ctx)
	if idemKey != "" {
		r.Header = req.Header.Clone()
		if r.Header == nil {
			r.Header = make(http.Header)
		}
		r.Header.Set("Idempotency-Key", idemKey)
	}
	if attempt > 1 && req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("replaying the request body: %w", err)
		}
		r.Body = body
	}
	return r, nil
}

// sleep waits d or until the caller's context ends.
func (c *call) sleep(d time.Duration) error {
	c.waited += d
	return sleepCtx(c.ctx, d)
}

// canceled records a call ended by its caller and returns the context's own
// error, unwrapped, as the contract promises. Cancelled during a wait, the
// outcome keeps the failure that was being waited out as its cause.
func (c *call) canceled(attempts int, waiting bool) error {
	err := c.ctx.Err()
	cause := err
	if waiting {
		cause = c.cause
	}
	c.finish(attempts, err, 0, 0, cause)
	if c.p.Reporter != nil {
		c.emit(event.Event{Kind: event.Stopped, Attempt: attempts, Reason: err.Error(), Stop: err})
	}
	return err
}

func (c *call) ensureTracker() *liveness.Tracker {
	if c.tracker == nil {
		c.tracker = liveness.NewSince(c.start)
	}
	return c.tracker
}

func (c *call) redacted() string {
	if c.url == "" {
		c.url = credentials.RedactURL(c.req.URL)
	}
	return c.url
}

func (c *call) finish(attempts int, stop error, status int, hint time.Duration, cause error) {
	if c.out == nil {
		return
	}
	c.out.Attempts = attempts
	c.out.Stop = stop
	if status != 0 {
		c.out.Status = status
	}
	if hint != 0 {
		c.out.RetryAfter = hint
	}
	c.out.Waited = c.waited
	c.out.Cause = cause
}

func (c *call) noteHint(hint time.Duration) {
	if c.out != nil {
		c.out.RetryAfter = hint
	}
}

func (c *call) lastStatus() int {
	if c.out != nil {
		return c.out.Status
	}
	return 0
}

// acceptQuota hands resp, accepted on its merits, to the caller when it
// carries rate-limit fields, and reports whether it did: the quota read and
// fed to the pacer, the body prepared, the outcome and the event told. The
// quota rides on the RequestFinished rather than on a QuotaSeen of its own,
// stamped with the clock read for it (ADR 0167). Out of run, so that a
// response without a quota pays nothing for it.
func (c *call) acceptQuota(resp *http.Response, attempt int, route string, sent time.Time, shared, inAttempt bool) bool {
	f, found := lookupQuota(resp.Header)
	if !found {
		return false
	}
	var q quotaPick
	at := c.readQuota(&f, route, sent, &q)
	c.handOver(resp, attempt, shared, inAttempt)
	c.finish(attempt, nil, resp.StatusCode, 0, nil)
	if c.p.Reporter != nil {
		e := event.Event{Kind: event.RequestFinished, Time: at, Attempt: attempt, Status: resp.StatusCode}
		if q.ok {
			e.Quota, e.Remaining, e.Reset = true, q.q.Remaining, q.q.Reset
		}
		// Straight to the Reporter, which is set, with the time stamped:
		// through event.Emit the event, some 300 bytes, is copied twice.
		c.fill(&e)
		c.p.Reporter.Report(e)
	}
	return true
}

// observeQuota reads resp's rate-limit fields and feeds the pacer; the
// caller reports them. at is when they were read, zero when resp has none:
// the clock is read only for a response that carries a quota.
func (c *call) observeQuota(resp *http.Response, route string, sent time.Time) (q Quota, at time.Time, ok bool) {
	f, found := lookupQuota(resp.Header)
	if !found {
		return Quota{}, time.Time{}, false
	}
	var p quotaPick
	at = c.readQuota(&f, route, sent, &p)
	return p.q, at, p.ok
}

// readQuota parses the rate-limit fields f found into q, feeds the pacer,
// and returns when they were read. This runs on every response of a
// limited API, so the quota is filled in place, its policy and name are
// read only for pacing (events carry what remains and the reset), and the
// transport's own pacer is asked first whether it would take note.
func (c *call) readQuota(f *quotaFields, route string, sent time.Time, q *quotaPick) time.Time {
	at := time.Now()
	if pickQuota(f, at, q); !q.ok || !c.p.Pace {
		return at
	}
	if c.p.Quotas != nil {
		settleQuota(f, &c.t.policies, q, true)
		c.p.Quotas.Observe(c.req.URL.Host, route, q.q, sent, at)
		return at
	}
	// A quota of X-RateLimit fields alone needs its limit only to tell
	// whether it opened its window (ADR 0212).
	if q.limit != "" && !f.ietf() {
		c.t.windows.settleLimit(f, q, c.req.URL.Host, route, &at)
	}
	if settleQuota(f, &c.t.policies, q, false); c.t.pacer.notes(&q.q, at) {
		if q.resource {
			nameQuota(f, q)
		}
		c.t.pacer.Observe(c.req.URL.Host, route, q.q, sent, at)
	}
	return at
}

func (c *call) emit(e event.Event) {
	c.fill(&e)
	event.Emit(c.p.Reporter, e)
}

// fill sets the fields every request event shares.
func (c *call) fill(e *event.Event) {
	e.Method = method(c.req)
	e.URL = c.redacted()
	e.Host = c.req.URL.Host
	e.MaxAttempts = c.p.MaxAttempts
	e.Context = c.ctx
	if c.actx != nil {
		e.Context = c.actx
	}
}

// startAttempt asks the tracer for the context attempt n is sent with.
func (c *call) startAttempt(n int) {
	e := event.Event{Kind: event.AttemptStarted, Attempt: n, Time: time.Now()}
	c.actx = nil
	c.fill(&e)
	c.actx = c.tracer.StartAttempt(e)
	if c.actx == nil {
		c.actx = c.ctx
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// quotas is where the call's quotas are kept: the policy's store, or the
// transport's own pacer.
func (c *call) quotas() QuotaStore {
	if c.p.Quotas != nil {
		return c.p.Quotas
	}
	return &c.t.pacer
}

// left returns the time until the context's deadline, if it has one.
func (c *call) left(now time.Time) (time.Duration, bool) {
	d, ok := c.ctx.Deadline()
	if !ok {
		return 0, false
	}
	return d.Sub(now), true
}

// paceFirst waits out the pacer's hold before the first attempt, or ends
// the call when the hold is longer than MaxRetryAfter or than the time left
// before the context's deadline.
func (c *call) paceFirst(host, route string) error {
	p := c.p
	now := time.Now()
	limit := p.MaxRetryAfter
	left, hasDeadline := c.left(now)
	if hasDeadline {
		limit = min(limit, left)
	}
	h := c.quotas().Hold(host, route, now, limit)
	if h.Wait == 0 {
		return nil
	}
	if h.Refused {
		reason := ErrRateLimited
		if h.Wait <= p.MaxRetryAfter {
			reason = ErrDeadline
		}
		c.finish(0, reason, 0, 0, nil)
		closeRequestBody(c.req) // never handed to the inner transport
		if p.Reporter != nil {
			c.emit(event.Event{Kind: event.Stopped, Reason: reason.Error(), Wait: h.Wait, Stop: reason})
		}
		return &Error{Method: c.req.Method, URL: c.redacted(), Reason: reason, Wait: h.Wait}
	}
	wait := c.holdWait(h, limit)
	if p.Reporter != nil {
		c.emit(event.Event{Kind: event.Waiting, Attempt: 1, Wait: wait, Reason: event.WaitRateLimited})
	}
	if err := c.sleep(wait); err != nil {
		closeRequestBody(c.req) // never handed to the inner transport
		return c.canceled(0, true)
	}
	c.ensureTracker().Credit(wait)
	return nil
}

// holdWait is a pacing hold with its jitter, which never takes the wait past
// limit.
func (c *call) holdWait(h PaceHold, limit time.Duration) time.Duration {
	return holdWait(h, c.p.Rand(), c.p.MaxBackoff, limit)
}

// rateLimit403 reports whether the fields of a 403 say it is a rate limit,
// as GitHub's secondary limits do: a Retry-After, or a spent quota.
func rateLimit403(h http.Header) bool {
	if _, ok := h["Retry-After"]; ok {
		return true
	}
	q, ok := ParseQuota(h, time.Now())
	return ok && q.Remaining == 0
}

// IsRateLimit reports whether resp refuses a request for its rate: a 429,
// or a 403 carrying a Retry-After or a spent quota (GitHub's primary and
// secondary limits). A plain 403 is not.
func IsRateLimit(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusForbidden:
		return rateLimit403(resp.Header)
	}
	return false
}

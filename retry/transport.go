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
	"github.com/steadyhttp/steady/ratelimit"
)

// Transport is a retrying [http.RoundTripper]. Create one with [New]; it is
// safe for concurrent use, and cheap on the success path: no allocation
// beyond the wrapped transport's, about a hundred nanoseconds.
type Transport struct {
	next    http.RoundTripper
	raw     Policy // as given, for overrides
	policy  Policy // with defaults
	invalid error
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
	return &Transport{next: next, raw: p, policy: p.withDefaults(), invalid: p.Validate()}
}

// Policy returns the policy the transport was made with.
func (t *Transport) Policy() Policy { return t.raw }

// Next returns the wrapped transport.
func (t *Transport) Next() http.RoundTripper { return t.next }

// CloseIdleConnections closes the wrapped transport's idle connections.
// When [Policy.Pacer] or [Policy.Budget] is shared with other processes
// ([ratelimit.SharedPacer], [budget.Budget.Store]), it first hands back the
// permits for now and the re-sends no request took, and credits the first
// attempts not yet told, so a program that is done leaves them to the rest
// of its fleet.
func (t *Transport) CloseIdleConnections() {
	if r, ok := t.policy.Pacer.(interface{ Release() }); ok {
		r.Release()
	}
	t.policy.Budget.Release()
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
	p, err := t.policyFor(ctx)
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	c := call{t: t, p: p, req: req, ctx: ctx, out: outcomeFrom(ctx), start: time.Now()}
	return c.run()
}

// PolicyFor returns the policy a request whose context is ctx is sent under:
// the transport's, changed by the overrides in ctx ([WithOverride]), every
// zero field set to its default. A layer above reads its bounds from it, as
// the body layer reads ReadTimeout. The error is the one RoundTrip would
// fail with: the policy, or an override of it, does not validate.
func (t *Transport) PolicyFor(ctx context.Context) (Policy, error) {
	p, err := t.policyFor(ctx)
	if err != nil {
		return Policy{}, err
	}
	return *p, nil
}

func (t *Transport) policyFor(ctx context.Context) (*Policy, error) {
	edit, ok := ctx.Value(overrideKey{}).(func(*Policy))
	if !ok {
		return &t.policy, t.invalid
	}
	q := t.raw
	edit(&q)
	if err := q.Validate(); err != nil {
		return nil, err
	}
	q = q.withDefaults()
	return &q, nil
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
	cont    bool   // a re-send for a response handed back earlier ([Transport.Resend])
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
	// A response handed back is progress only for a tracker someone else
	// reads: one shared through the context.
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

	if !c.cont {
		p.Budget.Deposit()
	}
	if rep != nil && !c.cont {
		c.emit(event.Event{Kind: event.RequestStarted})
	}
	var prevWait time.Duration

	// A quota that is spent is waited out before the first attempt; later
	// attempts take their slot with the wait that precedes them.
	if err := c.paceFirst(); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
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
		sent := time.Now()
		resp, err := c.t.next.RoundTrip(areq)
		if err == nil && resp == nil {
			err = fmt.Errorf("retry: %T returned neither a response nor an error", c.t.next)
		} else if err != nil && resp != nil {
			resp.Body.Close() // a broken RoundTripper; the error wins
			resp = nil
		}
		retryStatus := err == nil && (p.RetryStatus(resp.StatusCode) ||
			resp.StatusCode == http.StatusForbidden && ratelimit.IsRateLimit(resp))
		if inAttempt && err == nil && !retryStatus {
			var data []byte
			data, err = readInAttempt(resp, bodyLimit, p.ReadTimeout, c.tracker)
			if err != nil {
				resp = nil
			} else {
				resp.Body, resp.ContentLength = newBufferedBody(data), int64(len(data))
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
			if c.acceptQuota(resp, attempt, sent, shared) {
				return resp, nil
			}
			c.handOver(shared)
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
			if reset, spent := c.refusedQuota(resp, sent); spent && !hasHint {
				hint, hasHint = reset, true // Retry-After takes precedence when both are given
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
		if stop == nil && !p.Budget.Withdraw(now) {
			stop = ErrBudget
		}
		// The re-send takes its pacing slot now, at the instant it would be
		// sent, so that a hold it cannot serve stops it with its response
		// still in hand.
		var hold time.Duration
		if stop == nil {
			hold, stop = c.paceResend(now, wait, left, hasDeadline)
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
				c.handOver(shared)
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

// left returns the time until the context's deadline, if it has one.
func (c *call) left(now time.Time) (time.Duration, bool) {
	d, ok := c.ctx.Deadline()
	if !ok {
		return 0, false
	}
	return d.Sub(now), true
}

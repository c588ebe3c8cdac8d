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
	"golang.org/x/sync/semaphore"
)

// Transport is a retrying [http.RoundTripper]. Create one with [New]; it is
// safe for concurrent use, and cheap on the success path: no allocation
// beyond the wrapped transport's, about a hundred nanoseconds.
type Transport struct {
	next    http.RoundTripper
	raw     Policy // as given, for overrides
	policy  Policy // with defaults
	invalid error
	own     *ratelimit.Pacer // the Pacer of a policy that names none
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
	t := &Transport{next: next, raw: p, policy: p.withDefaults(), invalid: p.Validate()}
	t.own = &ratelimit.Pacer{MaxHold: t.policy.MaxRetryAfter}
	t.policy = t.policy.paced(t.own)
	return t
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

// RoundTripOutcome is RoundTrip that also returns the call's [Outcome],
// for a layer above that reads it (as the body layer does) without adding
// a context value and a request copy to every call. An Outcome in the
// request's context ([WithOutcome]) is filled as well.
func (t *Transport) RoundTripOutcome(req *http.Request) (*http.Response, Outcome, error) {
	ctx := req.Context()
	p, err := t.policyFor(ctx)
	if err != nil {
		closeRequestBody(req)
		return nil, Outcome{}, err
	}
	c := call{t: t, p: p, req: req, ctx: ctx, out: outcomeFrom(ctx), start: time.Now()}
	resp, err := c.run()
	return resp, *c.outcome(), err
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
	q = q.withDefaults().paced(t.own)
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
	out     *Outcome // the context's; nil: own records the call
	own     Outcome
	start   time.Time
	tracker *liveness.Tracker
	waited  time.Duration
	cause   error  // the last failure without a response
	url     string // redacted, computed on first use
	cont    bool   // a re-send for a response handed back earlier ([Transport.Resend])
	// What the call's context says (begin): the tracker is shared with
	// other layers, the body is read inside the attempt up to bodyLimit,
	// each attempt holds a slot of gate.
	shared    bool
	inAttempt bool
	bodyLimit int64
	gate      *semaphore.Weighted
	// tracer is the Reporter when it is a event.Tracer; actx is the
	// context it gave the attempt in flight, nil between attempts.
	tracer event.Tracer
	actx   context.Context
	// What overload control said of the last answer (settle): a 429
	// without quota fields (the breaker books its re-send in a window of
	// the host's limiter), and how many of the call's attempts were scouts
	// of a closed window, which MaxAttempts does not count.
	limited bool
	scouts  int
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

// run sends the call's attempts until one is accepted or retrying stops.
func (c *call) run() (*http.Response, error) {
	c.begin()
	plan := planSends(c.p, c.req)
	if !c.cont {
		c.p.Budget.Deposit()
		if c.p.Reporter != nil {
			c.emit(event.Event{Kind: event.RequestStarted})
		}
	}
	// A quota that is spent is waited out before the first attempt; later
	// attempts take their slot with the wait that precedes them.
	if err := c.paceFirst(); err != nil {
		return nil, err
	}
	var prevWait time.Duration
	for n := 1; ; n++ {
		a, err := c.send(n, plan.idemKey)
		if err != nil {
			return nil, err
		}
		if a.err == nil && !a.resend {
			return c.accept(n, a), nil // a success, or a status not re-sent
		}
		f := c.failed(a)
		v := c.judge(n, &f, plan, prevWait)
		if v.stop != nil {
			return c.stopAt(n, &f, v)
		}
		if err := c.waitOut(n, &f, v); err != nil {
			return nil, err
		}
		prevWait = v.wait
	}
}

// begin reads what the call's context says of it: a tracer, a tracker
// shared with other layers, a body to read inside the attempt, a gate.
func (c *call) begin() {
	if c.p.Reporter != nil {
		c.tracer, _ = c.p.Reporter.(event.Tracer)
	}
	c.tracker = liveness.From(c.ctx)
	// A response handed back is progress only for a tracker someone else
	// reads: one shared through the context.
	c.shared = c.tracker != nil
	c.bodyLimit, c.inAttempt = liveness.BodyInAttempt(c.ctx)
	c.gate = gateFrom(c.ctx)
	if c.gate != nil {
		c.ensureTracker()
	}
}

// sendPlan is what a call decides before its first attempt: the
// Idempotency-Key its attempts carry, and whether a failed attempt may be
// re-sent at all.
type sendPlan struct {
	idemKey    string
	whyNot     string // why no failed attempt is re-sent; "" when one may be
	replayable bool   // the body can be sent again
}

// planSends decides what may be re-sent of req under p. The caller's
// Idempotency-Key makes re-sendable a method the policy does not re-send;
// a method the policy opts in without one gets a key, generated once.
func planSends(p *Policy, req *http.Request) sendPlan {
	var s sendPlan
	resendable := p.allowsMethod(req.Method)
	if !resendable || !idempotentMethod(req.Method) {
		v := req.Header["Idempotency-Key"]
		callerKey := len(v) > 0 && v[0] != ""
		if resendable && !callerKey {
			s.idemKey = newIdempotencyKey()
		}
		resendable = resendable || callerKey
	}
	s.replayable = req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	switch {
	case !resendable:
		s.whyNot = "method " + req.Method + " is not idempotent and has no Idempotency-Key"
	case !s.replayable:
		s.whyNot = "the request body cannot be replayed (no GetBody)"
	}
	return s
}

// attempt is one exchange with the transport below.
type attempt struct {
	req    *http.Request // as sent
	at     time.Time     // when it was sent
	resp   *http.Response
	err    error
	resend bool // resp is a status the policy re-sends
}

// send makes attempt n once overload control admits it, holding a slot
// of the host's limit and one of the gate while it is in flight. An error
// means the call ends here: refused, cancelled, or a request that could
// not be made.
func (c *call) send(n int, idemKey string) (attempt, error) {
	tk, err := c.admit(n)
	if err != nil {
		return attempt{}, err
	}
	if err := c.acquire(); err != nil {
		c.settle(tk, nil)
		if n == 1 {
			closeRequestBody(c.req) // never handed to the inner transport
		}
		return attempt{}, c.canceled(n-1, n > 1) // queued for a re-send: still waiting out the last failure
	}
	a, err := c.exchange(n, idemKey)
	if c.gate != nil {
		c.gate.Release(1)
	}
	if err != nil {
		c.settle(tk, nil)
		return a, c.unsendable(n, err)
	}
	c.settle(tk, &a)
	if a.err != nil && c.ctx.Err() != nil {
		return a, c.canceled(n, false)
	}
	return a, nil
}

// acquire takes a slot of the gate (the host's slot is admit's); the
// time queued is credited. On an error nothing is held but the ticket,
// which the caller closes.
func (c *call) acquire() error {
	if c.gate == nil {
		return nil
	}
	queued := time.Now()
	if err := c.gate.Acquire(c.ctx, 1); err != nil {
		return err
	}
	c.ensureTracker().Credit(time.Since(queued))
	return nil
}

// exchange sends attempt n and reads inside the attempt what of its body
// the call reads there (readBody). An error means the attempt's request could not be made.
func (c *call) exchange(n int, idemKey string) (attempt, error) {
	if c.tracer != nil {
		c.startAttempt(n)
	}
	var a attempt
	var err error
	if a.req, err = c.attemptRequest(n, idemKey); err != nil {
		return a, err
	}
	if c.tracker != nil {
		c.tracker.CountAttempt(n > 1)
	}
	a.at = time.Now()
	a.resp, a.err = c.t.next.RoundTrip(a.req)
	if a.err == nil && a.resp == nil {
		a.err = fmt.Errorf("retry: %T returned neither a response nor an error", c.t.next)
	} else if a.err != nil && a.resp != nil {
		a.resp.Body.Close() // a broken RoundTripper; the error wins
		a.resp = nil
	}
	a.resend = a.err == nil && (c.p.RetryStatus(a.resp.StatusCode) ||
		a.resp.StatusCode == http.StatusForbidden && ratelimit.IsRateLimit(a.resp))
	if a.err == nil && !a.resend {
		if err := c.readBody(a.resp); err != nil {
			c.readQuota(a.resp, a.at) // the re-send draws the quota its header announced
			a.resp, a.err = nil, err
		}
	}
	return a, nil
}

// unsendable ends a call whose attempt n could not be made.
func (c *call) unsendable(n int, err error) error {
	c.finish(n-1, ErrNotRetryable, 0, 0, err)
	if c.p.Reporter != nil {
		c.emit(event.Event{Kind: event.Stopped, Attempt: n - 1, Err: errText(err),
			Reason: ErrNotRetryable.Error() + ": " + err.Error(), Stop: ErrNotRetryable})
	}
	return &Error{Method: c.req.Method, URL: c.redacted(), Attempts: n - 1, Reason: ErrNotRetryable, Err: err}
}

// accept hands back the response of attempt n, accepted on its merits.
func (c *call) accept(n int, a attempt) *http.Response {
	if c.acceptQuota(a.resp, n, a.at, c.shared) {
		return a.resp
	}
	c.handOver(c.shared)
	c.finish(n, nil, a.resp.StatusCode, 0, nil)
	if c.p.Reporter != nil {
		c.emit(event.Event{Kind: event.RequestFinished, Attempt: n, Status: a.resp.StatusCode})
	}
	return a.resp
}

// failure is what a failed attempt said: a status the policy re-sends
// (resp, with the server's hint), or an error without a response.
type failure struct {
	resp     *http.Response
	err      error
	status   int
	class    string
	cause    error // err, scrubbed of the request's URL
	canRetry bool
	hint     time.Duration
	hasHint  bool
}

// failed reads a failed attempt: its class, or its status and hint.
func (c *call) failed(a attempt) failure {
	f := failure{resp: a.resp, err: a.err, canRetry: true}
	if a.err != nil {
		f.class, f.canRetry = classify(a.err, a.req)
		f.cause = redactCause(a.err, c.req.URL.String(), c.redacted())
		c.cause = f.cause
		return f
	}
	f.status = a.resp.StatusCode
	f.hint, f.hasHint = ParseRetryAfter(a.resp.Header.Get("Retry-After"), time.Now())
	if reset, spent := c.refusedQuota(a.resp, a.at); spent && !f.hasHint {
		f.hint, f.hasHint = reset, true // Retry-After takes precedence when both are given
	}
	return f
}

// verdict is what follows a failed attempt: a stop, or a wait and a pacing
// hold, then the next attempt.
type verdict struct {
	stop   error
	why    string // detail of the stop
	wait   time.Duration
	reason string // of the wait
	hold   time.Duration
}

// judge decides whether attempt n's failure f is re-sent, and after how
// long.
func (c *call) judge(n int, f *failure, plan sendPlan, prevWait time.Duration) verdict {
	p := c.p
	v := verdict{reason: event.WaitBackoff}
	switch {
	case !f.canRetry:
		v.stop, v.why = ErrNotRetryable, f.class
	case plan.whyNot != "" && !(f.err != nil && plan.replayable && neverSent(f.err)):
		v.stop, v.why = ErrNotRetryable, plan.whyNot
	case n-c.scouts >= p.MaxAttempts:
		v.stop = ErrExhausted
	case f.hasHint && f.hint > p.MaxRetryAfter:
		v.stop = ErrRetryAfter
	default:
		v.wait, v.reason, v.stop = c.backoff(n, f, prevWait)
	}
	// A wait that cannot end before the deadline is not started.
	now := time.Now()
	left, hasDeadline := c.left(now)
	if v.stop == nil && hasDeadline && v.wait > left {
		v.stop = ErrDeadline
	}
	if v.stop == nil {
		v.stop = c.resendRefused(now)
	}
	if v.stop == nil && !p.Budget.Withdraw(now) {
		v.stop = ErrBudget
	}
	// The re-send takes its pacing slot now, at the instant it would be
	// sent, so that a hold it cannot serve stops it with its response
	// still in hand.
	if v.stop == nil {
		v.hold, v.stop = c.paceResend(now, v.wait, left, hasDeadline)
	}
	return v
}

// backoff is the wait before re-sending after attempt n: the server's hint
// or the policy's backoff. The first re-send is never withheld, so one
// slow attempt cannot disable retry; later ones must fit in the
// no-progress budget. A wait the server named is not counted: it is
// credited once served.
func (c *call) backoff(n int, f *failure, prevWait time.Duration) (time.Duration, string, error) {
	p := c.p
	wait, reason, planned := time.Duration(0), event.WaitServerHint, time.Duration(0)
	switch {
	case f.hasHint:
		wait = serverWait(f.hint, p.Rand(), p.MaxBackoff, p.MaxRetryAfter)
	case c.limited:
		// The breaker holds the re-send until the window it books it in;
		// the jitter only keeps it from being immediate.
		wait, reason = jitter(p.Rand(), min(p.InitialBackoff, minServerJitter)), event.WaitRateLimited
		planned = wait
	default:
		wait, reason = p.delay(n, prevWait, p.Rand()), event.WaitBackoff
		planned = wait
	}
	if n >= 2 && p.StallTimeout > 0 && c.ensureTracker().Silence()+planned > p.StallTimeout {
		return wait, reason, ErrStalled
	}
	return wait, reason, nil
}

// stopAt ends the call after attempt n: the last response goes back to
// the caller as it is, or the failure without one as an [*Error].
func (c *call) stopAt(n int, f *failure, v verdict) (*http.Response, error) {
	if f.hasHint {
		c.noteHint(f.hint)
	}
	c.finish(n, v.stop, f.status, f.hint, c.cause)
	if c.p.Reporter != nil {
		text := v.stop.Error()
		if v.why != "" {
			text += ": " + v.why
		}
		c.emit(event.Event{Kind: event.Stopped, Attempt: n, Status: f.status, ErrClass: f.class,
			Err: errText(f.cause), Reason: text, Wait: f.hint, Stop: v.stop})
	}
	if f.resp != nil {
		c.handOver(c.shared)
		return f.resp, nil
	}
	return nil, &Error{Method: c.req.Method, URL: c.redacted(), Attempts: n, Reason: v.stop,
		Status: c.lastStatus(), RetryAfter: f.hint, Err: f.cause}
}

// waitOut discards attempt n's response and waits before the next attempt.
func (c *call) waitOut(n int, f *failure, v verdict) error {
	discard(f.resp) // drained and closed before the wait, never after
	if f.hasHint {
		c.noteHint(f.hint)
	}
	if f.status != 0 {
		c.outcome().Status = f.status
	}
	if c.p.Reporter != nil {
		c.emit(event.Event{Kind: event.RetryScheduled, Attempt: n, Status: f.status, ErrClass: f.class,
			Err: errText(f.cause), Wait: v.wait, Reason: v.reason})
		if v.hold > 0 {
			c.emit(event.Event{Kind: event.Waiting, Attempt: n + 1, Wait: v.hold, Reason: event.WaitRateLimited})
		}
	}
	c.actx = nil // the attempt is over; the wait belongs to the request
	if err := c.sleep(v.wait + v.hold); err != nil {
		return c.canceled(n, true)
	}
	if f.hasHint {
		c.ensureTracker().Credit(v.wait)
	}
	if v.hold > 0 {
		c.ensureTracker().Credit(v.hold)
	}
	return nil
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
	o := c.outcome()
	o.Attempts = attempts
	o.Stop = stop
	if status != 0 {
		o.Status = status
	}
	if hint != 0 {
		o.RetryAfter = hint
	}
	o.Waited = c.waited
	o.Cause = cause
}

func (c *call) noteHint(hint time.Duration) { c.outcome().RetryAfter = hint }

// outcome is where the call records itself: the context's Outcome, or its own.
func (c *call) outcome() *Outcome {
	if c.out != nil {
		return c.out
	}
	return &c.own
}

func (c *call) lastStatus() int { return c.outcome().Status }

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

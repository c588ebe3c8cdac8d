package retry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/progress"
)

// Transport is a retrying [http.RoundTripper]. Create one with [New]; it is
// safe for concurrent use, and cheap on the success path: no allocation
// beyond the wrapped transport's, about a hundred nanoseconds.
type Transport struct {
	next    http.RoundTripper
	raw     Policy // as given, for overrides
	policy  Policy // with defaults
	invalid error
	pacer   Pacer
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
func (t *Transport) CloseIdleConnections() {
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
	url     string // redacted, computed on first use
	cont    bool   // a Range request continuing a broken body (resume.go)
	// tracer is the Reporter when it is a progress.Tracer; actx is the
	// context it gave the attempt in flight, nil between attempts.
	tracer progress.Tracer
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
		c.tracer, _ = rep.(progress.Tracer)
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

	// Whether a failed attempt may be re-sent at all, and why not.
	var idemKey string
	if v := req.Header["Idempotency-Key"]; len(v) > 0 { // canonical already: no allocation, no folding
		idemKey = v[0]
	}
	resendable := idemKey != "" || p.allowsMethod(req.Method)
	if resendable && idemKey == "" && !idempotentMethod(req.Method) {
		idemKey = newIdempotencyKey() // opted in by policy: one key for every attempt
	} else {
		idemKey = ""
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
		c.emit(progress.Event{Kind: progress.RequestStarted})
	}
	host := req.URL.Host
	var prevWait time.Duration

	for attempt := 1; ; attempt++ {
		// Pacing: a host whose quota is spent is waited out before sending.
		if p.Pace {
			if wait, spaced := c.t.pacer.Hold(host, time.Now()); wait > 0 {
				if wait > p.MaxRetryAfter {
					c.finish(attempt-1, ErrRateLimited, 0, 0, nil)
					if rep != nil {
						c.emit(progress.Event{Kind: progress.Stopped, Attempt: attempt - 1, Wait: wait,
							Reason: ErrRateLimited.Error(), Stop: ErrRateLimited})
					}
					if attempt == 1 {
						closeRequestBody(req) // never handed to the inner transport
					}
					return nil, &Error{Method: req.Method, URL: c.redacted(), Attempts: attempt - 1,
						Reason: ErrRateLimited, Wait: wait}
				}
				// Every request held to one reset must not wake at the same
				// instant, or the reset's first burst spends the new quota at
				// once: a spaced release already has its own slot; otherwise
				// the hold is jittered like a server-named wait.
				if !spaced {
					wait = serverWait(wait, p.Rand(), p.MaxBackoff, p.MaxRetryAfter)
				}
				if rep != nil {
					c.emit(progress.Event{Kind: progress.Waiting, Attempt: attempt, Wait: wait, Reason: progress.WaitRateLimited})
				}
				if err := c.sleep(wait); err != nil {
					if attempt == 1 {
						closeRequestBody(req) // never handed to the inner transport
					}
					return nil, c.canceled(attempt - 1)
				}
				c.ensureTracker().Credit(wait)
			}
		}

		if gate != nil {
			queued := time.Now()
			if err := gate.Acquire(c.ctx, 1); err != nil {
				if attempt == 1 {
					closeRequestBody(req) // never handed to the inner transport
				}
				return nil, c.canceled(attempt - 1)
			}
			c.tracker.Credit(time.Since(queued))
		}
		if c.tracer != nil {
			c.startAttempt(attempt)
		}
		areq, cancel, err := c.attemptRequest(attempt, idemKey, inAttempt)
		if err != nil {
			if gate != nil {
				gate.Release(1)
			}
			c.finish(attempt-1, ErrNotRetryable, 0, 0, err)
			if rep != nil {
				c.emit(progress.Event{Kind: progress.Stopped, Attempt: attempt - 1, Err: errText(err),
					Reason: ErrNotRetryable.Error() + ": " + err.Error(), Stop: ErrNotRetryable})
			}
			return nil, &Error{Method: req.Method, URL: c.redacted(), Attempts: attempt - 1, Reason: ErrNotRetryable, Err: err}
		}
		if c.tracker != nil {
			c.tracker.CountAttempt(attempt > 1)
		}
		resp, err := c.t.next.RoundTrip(areq)
		if err == nil && resp == nil {
			err = fmt.Errorf("retry: %T returned neither a response nor an error", c.t.next)
		} else if err != nil && resp != nil {
			resp.Body.Close() // a broken RoundTripper; the error wins
			resp = nil
		}
		retryStatus := err == nil && p.RetryStatus(resp.StatusCode)
		if inAttempt && err == nil && !retryStatus {
			var data []byte
			data, err = readInAttempt(resp, bodyLimit, p.ReadTimeout, cancel, c.tracker)
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
			cancelAttempt(cancel)
			return nil, c.canceled(attempt)
		}
		if err == nil && !retryStatus {
			// Accepted on its merits: a success or a status not re-sent.
			cancelAttempt(cancel)
			if p.Pace || rep != nil {
				c.observeQuota(resp)
			}
			c.handOver(resp, attempt, shared, inAttempt)
			c.finish(attempt, nil, resp.StatusCode, 0, nil)
			if rep != nil {
				c.emit(progress.Event{Kind: progress.RequestFinished, Attempt: attempt, Status: resp.StatusCode})
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
			if !canRetry {
				stopWhy = class
			}
		} else {
			status = resp.StatusCode
			hint, hasHint = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
			if p.Pace || rep != nil {
				if q, ok := c.observeQuota(resp); ok && !hasHint && p.Pace && q.Remaining == 0 && q.Reset > 0 {
					hint, hasHint = q.Reset, true // Retry-After takes precedence when both are given
				}
			}
		}
		cancelAttempt(cancel)
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
		reason := progress.WaitBackoff
		if stop == nil {
			if hasHint {
				wait, reason = serverWait(hint, p.Rand(), p.MaxBackoff, p.MaxRetryAfter), progress.WaitServerHint
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
		if stop == nil && p.Budget != nil && !p.Budget.Withdraw(time.Now()) {
			stop = ErrBudget
		}

		if stop != nil {
			if hasHint {
				c.noteHint(hint)
			}
			c.finish(attempt, stop, status, hint, cause)
			if rep != nil {
				text := stop.Error()
				if stopWhy != "" {
					text += ": " + stopWhy
				}
				c.emit(progress.Event{Kind: progress.Stopped, Attempt: attempt, Status: status, ErrClass: class,
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
			c.emit(progress.Event{Kind: progress.RetryScheduled, Attempt: attempt, Status: status, ErrClass: class,
				Err: errText(cause), Wait: wait, Reason: reason})
		}
		c.actx = nil // the attempt is over; the wait belongs to the request
		if err := c.sleep(wait); err != nil {
			return nil, c.canceled(attempt)
		}
		prevWait = wait
		if hasHint {
			c.ensureTracker().Credit(wait)
		}
	}
}

// attemptRequest returns the request for one attempt: the caller's own
// request when nothing about it changes, else a copy with a fresh body, the
// idempotency key, or a context the transport can cancel for a body read
// inside the attempt. The caller's request is never modified.
func (c *call) attemptRequest(attempt int, idemKey string, inAttempt bool) (*http.Request, context.CancelCauseFunc, error) {
	req := c.req
	if attempt == 1 && idemKey == "" && !inAttempt && c.actx == nil {
		return req, nil, nil
	}
	var cancel context.CancelCauseFunc
	ctx := c.ctx
	if c.actx != nil {
		ctx = c.actx
	}
	if inAttempt {
		ctx, cancel = context.WithCancelCause(ctx)
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
			cancelAttempt(cancel)
			return nil, nil, fmt.Errorf("replaying the request body: %w", err)
		}
		r.Body = body
	}
	return r, cancel, nil
}

func cancelAttempt(cancel context.CancelCauseFunc) {
	if cancel != nil {
		cancel(nil)
	}
}

// sleep waits d or until the caller's context ends.
func (c *call) sleep(d time.Duration) error {
	c.waited += d
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// canceled records a call ended by its caller and returns the context's own
// error, unwrapped, as the contract promises.
func (c *call) canceled(attempts int) error {
	err := c.ctx.Err()
	c.finish(attempts, err, 0, 0, err)
	if c.p.Reporter != nil {
		c.emit(progress.Event{Kind: progress.Stopped, Attempt: attempts, Reason: err.Error(), Stop: err})
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

// observeQuota reads resp's rate-limit fields, feeds the pacer and reports
// them.
func (c *call) observeQuota(resp *http.Response) (Quota, bool) {
	if !hasQuotaFields(resp.Header) {
		return Quota{}, false
	}
	now := time.Now()
	q, ok := ParseQuota(resp.Header, now)
	if !ok {
		return q, false
	}
	if c.p.Pace {
		c.t.pacer.Observe(c.req.URL.Host, q, now)
	}
	if c.p.Reporter != nil {
		c.emit(progress.Event{Kind: progress.QuotaSeen, Status: resp.StatusCode, Remaining: q.Remaining, Reset: q.Reset})
	}
	return q, true
}

func (c *call) emit(e progress.Event) {
	c.fill(&e)
	progress.Emit(c.p.Reporter, e)
}

// fill sets the fields every request event shares.
func (c *call) fill(e *progress.Event) {
	e.Method = c.req.Method
	if e.Method == "" {
		e.Method = http.MethodGet
	}
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
	e := progress.Event{Kind: progress.AttemptStarted, Attempt: n, Time: time.Now()}
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

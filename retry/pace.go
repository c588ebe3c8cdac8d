package retry

import (
	"net/http"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/ratelimit"
)

// The loop asks [Policy.Pacer] two questions: before a request is sent, may
// it be sent now or how long must it wait (paceFirst, paceResend); after a
// response, what it announced (acceptQuota, refusedQuota). Without a Pacer
// the answers are those of noPacing: send now, and nothing is kept. The
// quota a response announced is read without a Pacer too, for its events.

// noPacing is the [ratelimit.Limiter] of a policy without a Pacer.
type noPacing struct{}

func (noPacing) Hold(string, string, time.Time, time.Duration) ratelimit.Hold {
	return ratelimit.Hold{}
}
func (noPacing) Observe(string, string, ratelimit.Quota, time.Time, time.Time) {}

// pacer returns the policy's Pacer, or noPacing.
func (c *call) pacer() ratelimit.Limiter {
	if c.p.Pacer != nil {
		return c.p.Pacer
	}
	return noPacing{}
}

// route is what the request draws of a named quota.
func (c *call) route() string { return ratelimit.Route(c.req.URL.Path) }

// readQuota reads resp's quota, when pacing or reporting, and tells the
// Pacer every window the response announced. at is when the fields were
// read.
func (c *call) readQuota(resp *http.Response, sent time.Time) (q ratelimit.Quota, at time.Time, ok bool) {
	at = time.Now()
	if q, ok = ratelimit.Parse(resp.Header, at); ok {
		for _, w := range ratelimit.Windows(resp.Header, at) {
			c.pacer().Observe(c.req.URL.Host, c.route(), w, sent, at)
		}
	}
	return q, at, ok
}

// acceptQuota hands resp, accepted on its merits, to the caller when it
// carries a quota and the call paces or reports, and reports whether it
// did: the quota told to the Pacer, the body prepared, the outcome and the
// event told. The quota rides on the RequestFinished rather than on a
// QuotaSeen of its own, stamped with the clock read for it (ADR 0167).
func (c *call) acceptQuota(resp *http.Response, attempt int, sent time.Time, shared bool) bool {
	if c.p.Pacer == nil && c.p.Reporter == nil {
		return false
	}
	q, at, ok := c.readQuota(resp, sent)
	if !ok {
		return false
	}
	c.handOver(shared)
	c.finish(attempt, nil, resp.StatusCode, 0, nil)
	if c.p.Reporter != nil {
		c.emit(event.Event{Kind: event.RequestFinished, Time: at, Attempt: attempt, Status: resp.StatusCode,
			Quota: true, Remaining: q.Remaining, Reset: q.Reset})
	}
	return true
}

// refusedQuota reads the quota of resp, a refusal to be re-sent or not,
// tells the Pacer and reports it, and returns its reset when the quota is
// spent: the hint of a refusal without a Retry-After when pacing, and
// always for a 403, which only a rate limit makes worth re-sending.
func (c *call) refusedQuota(resp *http.Response, sent time.Time) (reset time.Duration, spent bool) {
	forbidden := resp.StatusCode == http.StatusForbidden
	if c.p.Pacer == nil && c.p.Reporter == nil && !forbidden {
		return 0, false
	}
	q, at, ok := c.readQuota(resp, sent)
	if !ok {
		return 0, false
	}
	if c.p.Reporter != nil {
		c.emit(event.Event{Kind: event.QuotaSeen, Time: at, Status: resp.StatusCode, Remaining: q.Remaining, Reset: q.Reset})
	}
	spent = (c.p.Pacer != nil || forbidden) && q.Remaining == 0 && q.Reset > 0
	return q.Reset, spent
}

// paceFirst waits out the Pacer's hold before the first attempt, or ends
// the call when the hold is longer than MaxRetryAfter or than the time left
// before the context's deadline.
func (c *call) paceFirst() error {
	p := c.p
	now := time.Now()
	limit := p.MaxRetryAfter
	if left, hasDeadline := c.left(now); hasDeadline {
		limit = min(limit, left)
	}
	h := c.pacer().Hold(c.req.URL.Host, c.route(), now, limit)
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
	wait := holdWait(h, p.Rand(), p.MaxBackoff, limit)
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

// paceResend takes the pacing slot of a re-send planned wait after now:
// the hold to add to the wait, or why the re-send stops (a hold beyond
// MaxRetryAfter, or beyond the time left before the deadline).
func (c *call) paceResend(now time.Time, wait, left time.Duration, hasDeadline bool) (time.Duration, error) {
	p := c.p
	limit := p.MaxRetryAfter
	if hasDeadline {
		limit = min(limit, left-wait)
	}
	h := c.pacer().Hold(c.req.URL.Host, c.route(), now.Add(wait), limit)
	switch {
	case h.Refused && h.Wait > p.MaxRetryAfter:
		return 0, ErrRateLimited
	case h.Refused:
		return 0, ErrDeadline
	case h.Wait > 0:
		return holdWait(h, p.Rand(), p.MaxBackoff, limit), nil
	}
	return 0, nil
}

// holdWait is a pacing hold plus its jitter (sized by the pacer, capped at
// maxBackoff), never past limit.
func holdWait(h ratelimit.Hold, r float64, maxBackoff, limit time.Duration) time.Duration {
	return h.Wait + jitter(r, min(h.Jitter, maxBackoff, limit-h.Wait))
}

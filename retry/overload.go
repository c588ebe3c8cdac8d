package retry

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/ratelimit"
)

// The loop asks [Policy.Overload] about every attempt, in the order of ADR
// 0280: before it is sent, may the host be sent to now and how long to hold
// the attempt (admit); a slot under the host's concurrency limit, before
// the gate's (acquire); and once it is answered, what the answer says of
// the host (settle), on every path. Before a failure is waited out, judge
// asks whether its re-send would be refused (resendRefused), so that the
// call ends with the response still in hand. Without a Breaker every
// answer is yes and nothing is told.

// refusal is the stop reason of a call overload control refused: it
// matches [ErrOverload], and unwraps to the breaker's [*breaker.Error],
// whose cause ([breaker.ErrOpen], [breaker.ErrThrottled]) and RetryAfter
// the caller reads.
type refusal struct{ err *breaker.Error }

func (r *refusal) Error() string {
	return fmt.Sprintf("%v: %v, try again in %v", ErrOverload, r.err.Err, r.err.Wait.Round(time.Millisecond))
}

func (r *refusal) Is(target error) bool { return target == ErrOverload }
func (r *refusal) Unwrap() error        { return r.err }

// refuse wraps a refusal of the breaker as a stop reason.
func refuse(err error) error {
	var e *breaker.Error
	if !errors.As(err, &e) {
		e = &breaker.Error{Err: err}
	}
	return &refusal{err: e}
}

// overloadHost is the host as the breaker keys it: lower case, with the
// port the request dials.
func overloadHost(r *http.Request) string {
	// URL.Host is host[:port] with an IPv6 literal in brackets already,
	// which is the key's form once its port is there.
	host := strings.TrimSuffix(r.URL.Host, ":")
	if i := strings.LastIndexByte(host, ':'); i < 0 || strings.IndexByte(host[i:], ']') >= 0 {
		if strings.EqualFold(r.URL.Scheme, "https") {
			host += ":443"
		} else {
			host += ":80"
		}
	}
	return strings.ToLower(host)
}

// admit asks the breaker whether attempt n may be sent now, waits out the
// hold it gives (the window of a host's limiter the attempt is booked in,
// after headerless 429s) and each further hold [breaker.Ticket.Rehold]
// gives, then takes a slot under the host's concurrency limit, before the
// gate's; an attempt whose window was refused while it queued is held
// again. Holds are compared with the deadline and MaxRetryAfter first and
// credited once served, but for a scout's, which the stall budget bounds;
// queue time is credited. A nil ticket means no overload control. An
// error ends the call: a refusal, a hold that cannot be waited, or
// cancellation.
func (c *call) admit(n int) (*breaker.Ticket, error) {
	b := c.p.Overload
	if b == nil {
		return nil, nil
	}
	now := time.Now()
	tk, err := b.Admit(now, overloadHost(c.req), c.p.OverloadKey, n > 1 || c.cont)
	if err != nil {
		return nil, c.cannotSend(n, refuse(err), 0)
	}
	for hold := tk.Hold(); ; hold = tk.Rehold(time.Now()) {
		for ; hold > 0; hold = tk.Rehold(time.Now()) {
			if err := c.holdFor(n, tk, hold); err != nil {
				return nil, err
			}
		}
		queued := time.Now()
		if err := tk.Acquire(c.ctx); err != nil {
			tk.Done(time.Now(), breaker.Abandoned, 0)
			if n == 1 {
				closeRequestBody(c.req) // never handed to the inner transport
			}
			return nil, c.canceled(n-1, n > 1) // queued for a re-send: still waiting out the last failure
		}
		c.ensureTracker().Credit(time.Since(queued))
		if tk.Sendable() {
			return tk, nil
		}
	}
}

// holdFor waits out one hold of attempt n's ticket.
func (c *call) holdFor(n int, tk *breaker.Ticket, hold time.Duration) error {
	now := time.Now()
	stop := error(nil)
	if left, ok := c.left(now); ok && hold > left {
		stop = ErrDeadline
	} else if hold > c.p.MaxRetryAfter {
		stop = ErrRetryAfter
	}
	if stop != nil {
		tk.Done(now, breaker.Abandoned, 0)
		return c.cannotSend(n, stop, hold)
	}
	if c.p.Reporter != nil {
		c.emit(event.Event{Kind: event.Waiting, Attempt: n, Wait: hold, Reason: event.WaitOverload})
	}
	if err := c.sleep(hold); err != nil {
		tk.Done(time.Now(), breaker.Abandoned, 0)
		if n == 1 {
			closeRequestBody(c.req)
		}
		return c.canceled(n-1, true)
	}
	if !tk.Scout() {
		c.ensureTracker().Credit(hold)
	}
	return nil
}

// cannotSend ends a call whose attempt n is not sent, for stop: the last
// cause and status stay in the outcome and the error.
func (c *call) cannotSend(n int, stop error, wait time.Duration) error {
	if n == 1 {
		closeRequestBody(c.req) // never handed to the inner transport
	}
	c.finish(n-1, stop, 0, 0, c.cause)
	if c.p.Reporter != nil {
		c.emit(event.Event{Kind: event.Stopped, Attempt: n - 1, Err: errText(c.cause), Reason: stop.Error(), Wait: wait, Stop: stop})
	}
	return &Error{Method: c.req.Method, URL: c.redacted(), Attempts: n - 1, Reason: stop,
		Status: c.lastStatus(), Wait: wait, Err: c.cause}
}

// resendRefused returns the refusal a re-send would get now, or nil.
func (c *call) resendRefused(now time.Time) error {
	if c.p.Overload == nil {
		return nil
	}
	if err := c.p.Overload.Check(now, overloadHost(c.req), c.p.OverloadKey); err != nil {
		return refuse(err)
	}
	return nil
}

// settle tells the breaker what attempt a's answer says of the host, by the
// loop's own classification.
func (c *call) settle(tk *breaker.Ticket, a *attempt) {
	if tk == nil {
		return
	}
	now := time.Now()
	c.limited = false
	if a == nil {
		tk.Done(now, breaker.Abandoned, 0)
		return
	}
	o, retryAfter := c.verdictOf(a, now)
	tk.Done(now, o, retryAfter)
	c.limited = o == breaker.Limited && tk.Booked()
	if o == breaker.Limited && tk.Scout() {
		c.scouts++
	}
}

// verdictOf classifies an answer for the breaker: a timeout or a refused
// connection, or a 5xx the policy re-sends, is a Failure; a rate
// refusal is Paced when it carries quota fields (the pacer's), Limited
// when not (AIMD's); 2xx and 3xx are a Success; other statuses say
// nothing of the host's health. A failure the caller caused (the context
// ended) or that no later attempt survives tells nothing.
func (c *call) verdictOf(a *attempt, now time.Time) (breaker.Outcome, time.Duration) {
	if a.err != nil {
		if c.ctx.Err() != nil {
			return breaker.Abandoned, 0
		}
		// A host that times out or refuses is not serving; a connection cut
		// mid-answer (a reset, an early EOF) is the path's fault as often as
		// the host's, and a flaky but productive link must not trip it.
		if class, transient := classify(a.err, a.req); transient && (class == classTimeout || class == classRefused) {
			return breaker.Failure, 0
		}
		return breaker.Abandoned, 0
	}
	code := a.resp.StatusCode
	switch {
	case code == http.StatusTooManyRequests || code == http.StatusForbidden && ratelimit.IsRateLimit(a.resp):
		if _, ok := ratelimit.Parse(a.resp.Header, now); ok {
			return breaker.Paced, 0
		}
		return breaker.Limited, 0
	case code >= 500 && c.p.RetryStatus(code):
		hint, _ := ParseRetryAfter(a.resp.Header.Get("Retry-After"), now)
		return breaker.Failure, hint
	case code < 400:
		return breaker.Success, 0
	}
	return breaker.Neutral, 0
}

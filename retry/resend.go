package retry

import (
	"context"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/liveness"
)

// A Break is a failure that came after the transport handed a response
// back, such as its body breaking mid-way, and what the re-sends since data
// last arrived have cost. A layer above (package resume) keeps one per body
// and passes it to every [Transport.Resend], which brings Err, Failed and
// the last wait up to date.
type Break struct {
	// Err is the failure. Resend replaces it with the same failure, its
	// text scrubbed of the request's URL.
	Err error
	// Reason and Bytes are what the RetryScheduled event says: what is
	// re-sent ("resume at byte 1024") and how many bytes of the body the
	// caller has.
	Reason string
	Bytes  int64
	// Failed counts the attempts failed since data last arrived, the one
	// that broke included once Resend counted it. The layer above sets it
	// to 0 when data it counts as progress arrives.
	Failed int
	// AtOnce sends the first re-send since data arrived without a backoff:
	// the connection was lost after enough progress that it is replaced,
	// not a server relieved (ADR 220).
	AtOnce bool

	wait time.Duration // the last backoff, for decorrelated jitter
}

// Resend re-sends req for a call whose response broke after it was handed
// back, as the re-send it is under the policy: it counts the break as a
// failed attempt, ends retrying as the loop would (a failure a later
// attempt cannot survive returns b.Err as it is; MaxAttempts, the stall
// budget measured by the tracker in req's context, the context's deadline
// and the retry budget return an [*Error]), waits the backoff, and sends
// req under the attempts left, each attempt paced, gated and classified
// like any. The re-send is not a new request: it makes no budget deposit
// and no RequestStarted event, and its response is not progress by itself;
// only the layer above knows whether its bytes are. The Outcome is the
// re-send's own, its wait included; the caller's Outcome in req's context
// is left to the layer above.
func (t *Transport) Resend(req *http.Request, b *Break) (*http.Response, Outcome, error) {
	ctx := req.Context()
	p, err := t.policyFor(ctx)
	if err != nil {
		return nil, Outcome{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, Outcome{}, err
	}
	class, retryable := classify(b.Err, req)
	if !retryable {
		return nil, Outcome{}, b.Err
	}
	c := call{t: t, p: p, req: req, ctx: ctx, start: time.Now(), cont: true, tracker: liveness.From(ctx)}
	b.Err = redactCause(b.Err, req.URL.String(), c.redacted())
	b.Failed++
	wait, stop := c.resendWait(b)
	if stop != nil {
		if p.Reporter != nil {
			c.emit(event.Event{Kind: event.Stopped, Attempt: b.Failed, Err: errText(b.Err), Reason: stop.Error(), Stop: stop})
		}
		return nil, Outcome{Stop: stop, Cause: b.Err},
			&Error{Method: method(req), URL: c.redacted(), Attempts: b.Failed, Reason: stop, Err: b.Err}
	}
	if p.Reporter != nil {
		// Numbered like the attempts the policy bounds: those since data
		// last arrived, so a long download's fifth break is not "5/4".
		c.emit(event.Event{Kind: event.RetryScheduled, Attempt: b.Failed, ErrClass: class,
			Err: errText(b.Err), Wait: wait, Reason: b.Reason, Bytes: b.Bytes})
	}
	if err := sleepCtx(ctx, wait); err != nil {
		return nil, Outcome{}, err
	}
	b.wait = wait
	q := *p
	q.MaxAttempts = max(p.MaxAttempts-b.Failed, 1)
	var out Outcome
	c.p, c.out, c.start = &q, &out, time.Now()
	resp, err := c.run()
	out.Waited += wait
	if err == nil {
		b.Failed += out.Attempts - 1
	}
	return resp, out, err
}

// resendWait is the backoff before the re-send of b, or why there is none.
func (c *call) resendWait(b *Break) (time.Duration, error) {
	p := c.p
	var wait time.Duration
	switch {
	case b.Failed >= p.MaxAttempts:
		return 0, ErrExhausted
	case b.Failed == 1 && b.AtOnce:
	default:
		wait = p.delay(b.Failed, b.wait, p.Rand())
		// As for any re-send: the first is never withheld, later ones must
		// fit in the no-progress budget.
		if b.Failed >= 2 && p.StallTimeout > 0 && c.ensureTracker().Silence()+wait > p.StallTimeout {
			return 0, ErrStalled
		}
	}
	// A wait that cannot end before the deadline is not started.
	now := time.Now()
	if left, ok := c.left(now); ok && wait > left {
		return 0, ErrDeadline
	}
	if p.Budget != nil && !p.Budget.Withdraw(now) {
		return 0, ErrBudget
	}
	return wait, nil
}

// handOver marks a shared tracker as a response goes back: it is progress.
// A re-send's is not; only the bytes of the body it continues are.
func (c *call) handOver(shared bool) {
	if shared && !c.cont {
		c.tracker.Mark()
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

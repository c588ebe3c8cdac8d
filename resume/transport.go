package resume

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/retry"
)

// Transport is the body layer: an [http.RoundTripper] above a
// [retry.Transport] that bounds the reads of every body it hands back and
// continues a broken one. Create one with [New]; it is safe for concurrent
// use.
type Transport struct {
	next *retry.Transport
	held atomic.Int64 // bytes of request bodies kept to replay them
}

var _ http.RoundTripper = (*Transport)(nil)

// New returns a Transport that sends through next. A nil next means
// retry.New(nil, retry.Policy{}).
func New(next *retry.Transport) *Transport {
	if next == nil {
		next = retry.New(nil, retry.Policy{})
	}
	return &Transport{next: next}
}

// RoundTrip sends req through the retry transport below and hands back its
// response, the body bounded and resumable as the package doc says. It
// returns what the transport below returned; only the body differs.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if p, err := t.next.PolicyFor(ctx); err == nil { // else RoundTrip below reports it
		var done func()
		if req, done = t.replayable(req, p.ReplayBytes); done != nil {
			defer done()
		}
	}
	if _, inAttempt := liveness.BodyInAttempt(ctx); inAttempt {
		return t.next.RoundTrip(req) // the body is read below, inside the attempt: nothing to hand over
	}
	// The body's errors count the attempts of the call that produced it,
	// and update the caller's outcome, if it keeps one.
	resp, o, err := t.next.RoundTripOutcome(req)
	if err != nil {
		return nil, err
	}
	t.handOver(req, resp, retry.OutcomeFrom(ctx), o)
	return resp, nil
}

// CloseIdleConnections closes the idle connections of the transport below,
// which hands back what it holds of shared quotas and budgets first.
func (t *Transport) CloseIdleConnections() { t.next.CloseIdleConnections() }

type offKey struct{}

// Off returns a context whose responses are never continued with a Range
// request: a broken body fails the read with its own error, as net/http's
// would. Its reads are still bounded by the read timeout.
func Off(ctx context.Context) context.Context {
	return context.WithValue(ctx, offKey{}, true)
}

// handOver prepares resp's body for the caller: the idle read timeout,
// progress on a shared tracker, and continuation when the response proves
// its body. A body nothing of that applies to is left as the transport
// below made it.
func (t *Transport) handOver(req *http.Request, resp *http.Response, out *retry.Outcome, o retry.Outcome) {
	if resp.Body == nil || resp.Body == http.NoBody ||
		resp.StatusCode == http.StatusSwitchingProtocols { // a writable body, not a stream
		return
	}
	if _, ok := resp.Body.(interface{ Bytes() []byte }); ok {
		return // read inside the attempt: in memory already
	}
	ctx := req.Context()
	p, err := t.next.PolicyFor(ctx)
	if err != nil {
		return // not reached: the request was just sent under it
	}
	idle := max(p.ReadTimeout, 0)
	tr := liveness.From(ctx) // body reads are progress for a tracker someone else reads
	res := resumable(req, resp)
	if idle == 0 && tr == nil && !res.possible() {
		return
	}
	if tr == nil && res.validator != "" {
		tr = liveness.New() // the stall budget of continuations measures from the hand-over on
	}
	resp.Body = &body{t: t, req: req, ctx: ctx, p: p, out: out, tr: tr, idle: idle, res: res,
		attempts: o.Attempts, waited: o.Waited, rc: liveness.BoundReads(resp.Body, idle)}
}

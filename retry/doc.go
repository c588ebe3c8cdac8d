// Package retry provides an [http.RoundTripper] that re-sends what a later
// attempt could survive, and nothing else.
//
// A [Transport] wraps another RoundTripper ([New]). Each call is bounded two
// independent ways. [Policy.MaxAttempts] counts tries. [Policy.StallTimeout]
// counts silence: the time the call has gone without receiving any data. The
// attempt count alone leaves time unbounded (four re-sends of a request that
// times out after a minute are four silent minutes), and silence alone would
// cut a slow but productive download, so both apply. The silence is measured
// by a [liveness.Tracker] carried in the request's context; a page walk or a
// fan-out that puts one tracker in the context shares the budget across all
// its requests. A response handed to the caller and body bytes the caller
// reads are progress. Before every re-send after the first, the call stops
// with [ErrStalled] when the silence so far plus the planned backoff exceeds
// the budget. Waits the server named (Retry-After) and time queued for a
// concurrency slot ([WithGate]) are credited back: waiting is not silence.
//
// Between attempts the transport waits: full-jitter exponential backoff
// ([Policy.InitialBackoff], [Policy.MaxBackoff]), or the server's Retry-After
// ([ParseRetryAfter]) plus a little jitter. A server that asks for more than
// [Policy.MaxRetryAfter] is not obeyed by sleeping: the call stops at once
// with [ErrRetryAfter] and the response goes back to the caller, who decides.
//
// No wait is started that cannot end before the context's deadline: the
// call stops at once with [ErrDeadline] (which errors.Is matches against
// [context.DeadlineExceeded]) and the last response, or the last cause.
//
// With a [Policy.Pacer] (a [ratelimit.Limiter]), the transport asks it
// before every attempt whether the request may be sent now or how long it
// must wait, and tells it the quota every response announced
// ([ratelimit.Parse]: the IETF draft's RateLimit and RateLimit-Policy forms
// and X-RateLimit-*); a [ratelimit.Pacer] holds the requests that draw a
// spent quota until its reset, spacing them at the announced rate. A 403
// that says it is a rate limit ([ratelimit.IsRateLimit]) is waited out like
// a 429.
//
// With a [Policy.Overload] (a [breaker.Breaker]), every attempt is admitted
// by the host's overload control when it is sent, held by the spacing it
// learned from 429s without quota fields, and given a slot under the
// host's concurrency limit; its answer, as this package classifies it, is
// told back. A refusal ends the call at once with [ErrOverload]; before a
// failure is waited out, a re-send the circuit would refuse ends the call
// with the response in hand.
//
// Only what a later attempt could survive is re-sent: statuses chosen by
// [Policy.RetryStatus] ([GatewayStatus] or [AnyServerError]), and transport
// failures that are transient by type (refused, reset, timeout, unexpected
// EOF), never a TLS verification failure, a name that does not exist or a
// malformed request. Only idempotent methods are re-sent, unless the request
// carries an Idempotency-Key or the policy opts the method in.
//
// A body read inside the attempt ([liveness.WithBodyInAttempt]) is bounded
// by [Policy.ReadTimeout]: a read that waits longer fails the attempt, which
// is re-sent. Bodies handed to the caller are the body layer's (package
// resume, a RoundTripper above this one): it bounds their reads by the same
// ReadTimeout ([Transport.PolicyFor]) and continues a broken one with a
// validated Range request, which it sends through [Transport.Resend] so
// that each continuation is a re-send under this policy.
//
// The RoundTripper contract holds: a response obtained is returned with a nil
// error, including the last 429 or 503 when retrying ends; an error is
// returned only when there is no response, as a [*Error] that names the stop
// reason ([ErrExhausted], [ErrStalled], [ErrNotRetryable], ...) and wraps the
// last cause. Cancellation is returned as the context's own error. Every call
// can be observed: events go to [Policy.Reporter], and [WithOutcome] records
// the attempts and the stop reason of one call even when it returned a
// response.
//
// A [Policy.Budget] ([budget.Budget]) bounds re-sends across the calls that
// share it. The budget and the quotas a [ratelimit.Pacer] follows are this
// process's own; a fleet of processes on one API key shares them through a
// store ([budget.Store], and a [ratelimit.SharedPacer] on a
// [ratelimit.Leaser]), which the redisquota module implements on Redis. A
// store that fails or is slow is answered from local state, never by
// failing or stalling a request.
package retry

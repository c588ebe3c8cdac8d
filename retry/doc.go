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
// Only what a later attempt could survive is re-sent: statuses chosen by
// [Policy.RetryStatus] ([GatewayStatus] or [AnyServerError]), and transport
// failures that are transient by type (refused, reset, timeout, unexpected
// EOF), never a TLS verification failure, a name that does not exist or a
// malformed request. Only idempotent methods are re-sent, unless the request
// carries an Idempotency-Key or the policy opts the method in.
//
// A body handed to the caller is watched: a read that waits longer than
// [Policy.ReadTimeout] fails with a [*ReadTimeoutError]. One watchdog per
// Transport watches every body, read inside the attempt or by the caller,
// by closing a body whose read waited too long; a transport below must let
// Close unblock a Read, as every net/http transport does. A GET answered 200
// whose body breaks mid-way (a reset, an unexpected EOF, that timeout) is
// continued inside Read with a Range request from the byte reached, guarded
// by If-Range with the response's strong validator; only a 206 that proves
// it continues the same body is read on, and anything else fails the read
// with a [*ResumeError] ([ErrResumeRefused]) rather than splice two answers.
// Continuations are attempts under the policy; [Outcome.Resumes] counts
// them, and [WithoutResume] or [Policy.NoResume] turn them off. The first
// continuation after a break that followed at least 1 MiB of new bytes is
// sent without a backoff; any further one waits as a re-send does.
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

// Package breaker is overload control by signal, per host: a circuit
// breaker and adaptive client-side throttling for outages (5xx and
// timeouts), and a concurrency limit with additive increase and
// multiplicative decrease (AIMD) for 429s that come without quota headers.
// A 429 is never a failure: quota is the pacer's business, an outage is
// the breaker's.
//
// # The model
//
// A [Breaker] keeps one entry per host and key (the key is an opaque string
// the caller passes, such as a hash of a credential, so that two keys at one
// host do not share state; "" means the host alone), in a map bounded by
// [Config].MaxHosts. Each entry has three parts.
//
// The circuit is [Closed] while less than FailureRatio of the first attempts
// counted over a rolling Window failed, or fewer than MinRequests were
// counted (one vote a call: its re-sends are not counted). Beyond that it is
// [Open]: attempts fail fast with [ErrOpen] for
// OpenDelay, or for the Retry-After the host sent, bounded by MaxOpenDelay.
// Then it is [HalfOpen]: Probes attempts (default 1) go through at once,
// counted while in flight, and the rest fail fast. A probe answered by
// anything but a failure closes the circuit; a failed probe re-opens it
// for twice the last delay, bounded.
//
// The throttle rejects first attempts of a closed circuit with the
// probability max(0, (requests − K·accepts)/(requests + 1)) over a rolling
// ThrottleWindow, capped at MaxRejection and zero below ThrottleFloor
// requests, so a host that fails for most calls gets a share of them, and
// one that recovers is always re-probed. A rejection fails fast with
// [ErrThrottled].
//
// The limit bounds the attempts in flight toward the host. A headerless
// 429 of a first attempt halves it, once for all the attempts sent since
// the previous cut (they met one window of the server's limiter); a
// re-send's 429 does not cut again; at 1 it spaces the sends
// instead, twice the round trip apart, then twice that. Each success grows
// it back additively, up to MaxConcurrency.
//
// Every refusal is an [*Error]: errors.Is finds its cause, and its
// RetryAfter method says how long until the host may be tried again, as of
// the refusal, through the interface fan-out and the command read.
//
// # The seam for a retry loop
//
// For each attempt the loop asks, in order:
//
//  1. [Breaker.Admit](now, host, key, resend): may I send now? A refusal
//     ends the call, without a re-send: with the [*Error], or with the
//     last response when a re-send is refused (the RoundTripper contract).
//     A re-send (resend true) is already bounded by the retry budget, so
//     the throttle does not apply to it, but an open or half-open circuit
//     refuses it, and it is never a probe. Host is compared as given: the
//     caller passes it in one form (lower case, with the port it dials).
//  2. [Ticket.Hold]: how long to hold the attempt before sending (a wait
//     like a pacing hold: compared with the deadline, credited).
//  3. [Ticket.Acquire](ctx): a slot under the host's limit, or ctx's end.
//  4. [Ticket.Done](now, outcome, retryAfter): what happened, as an
//     [Outcome] the caller's classification picked: [Success], [Failure]
//     (a 5xx or a timeout it calls transient), [Limited] (a 429 without
//     quota headers), [Paced] (a 429 or a quota refusal with headers: the
//     pacer's), [Neutral] (a 4xx) or [Abandoned] (no answer). Every ticket
//     is closed, whatever happened.
//
// Before a loop waits out a failure, [Breaker.Check] tells whether the
// re-send would be refused, without admitting anything, so that the call
// can end with the failed response still in hand.
//
// [Breaker.State] and [Breaker.Limit] read an entry; every change also goes
// to [Config].OnChange as a [Change], which [Change.Event] turns into an
// [event.BreakerChanged] for a [event.Reporter].
//
// Time is a parameter of every method but [Ticket.Acquire]; the breaker
// never sleeps and starts no goroutine.
package breaker

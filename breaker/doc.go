// Package breaker is overload control by signal, per host: a circuit
// breaker and adaptive client-side throttling for outages (5xx and
// timeouts), and for 429s that come without quota headers a quota learned
// from the limiter's windows and a concurrency limit, each with additive
// increase and multiplicative decrease (AIMD).
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
// the previous cut (they met one window of the server's limiter), down to
// 1; a re-send's 429 does not cut again. Each success grows it back
// additively, up to MaxConcurrency.
//
// The quota is the rate. A limiter that answers bare 429s serves a run of
// requests, refuses the rest of its window, and serves again once the
// window ends. The first 429 after a run closes the window; one attempt at
// a time then probes it (a [Ticket.Scout]), an eighth of the time since the
// window began apart, bounded by MaxSpacing, while the others wait for its
// verdict ([Ticket.Rehold]); the probe served gives the window's length,
// and the run its count ([Breaker.Quota]). From then on each attempt is
// booked in a window: its hold is the window's start. A window served in
// full lets one more send into the next; one refused early sets the count
// to what it served; one refused at its first send is learned again. A host
// that refuses outright (no run served) is not booked.
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
//  2. [Ticket.Hold], then [Ticket.Rehold] until it says 0: how long to
//     hold the attempt before sending (a wait like a pacing hold: compared
//     with the deadline, credited, but for a scout's).
//  3. [Ticket.Acquire](ctx): a slot under the host's limit, or ctx's end;
//     without a slot ([Ticket.Sendable] false) when the attempt's window
//     was refused while it queued: back to step 2.
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
// After a [Limited] verdict, [Ticket.Booked] says whether the re-send will
// be booked in a window, so that the loop needs no backoff of its own; a
// scout's 429 is not a failed attempt.
//
// [Breaker.State], [Breaker.Limit] and [Breaker.Quota] read an entry; every change also goes
// to [Config].OnChange as a [Change], which [Change.Event] turns into an
// [event.BreakerChanged] for a [event.Reporter].
//
// Time is a parameter of every method but [Ticket.Acquire]; the breaker
// never sleeps and starts no goroutine.
package breaker

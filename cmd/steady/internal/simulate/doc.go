// Package simulate shows what a retry policy does to a service before it
// ships: a deterministic discrete-event simulation of many clients that
// drives the retry package's own code (its backoff, its server-hint wait,
// its Retry-After and RateLimit parsers, its retry budget and its pacer),
// not a copy, so a change to that code changes what is simulated.
//
// Time is virtual. Each run keeps its future in an event queue and jumps
// from one event to the next; the retry package is handed the virtual
// instant wherever it takes a time, so a [budget.Budget] refills in
// simulated seconds. Every random number comes from a seeded PCG stream
// named after the part of the run it serves, so the same seed gives the
// same numbers, byte for byte, and every policy of a comparison faces the
// same network and, in scenario 2, the same requests.
//
// [Contention] is scenario 1, the model of the well-known study of backoff
// and jitter: N clients each make one optimistic-concurrency write to one
// shared row, reading its version and writing it back; a write fails if
// another committed since the read, and the writer backs off and tries
// again until it succeeds. [ContentionPolicies] are the study's five: no
// backoff, exponential backoff without jitter, and full, equal and
// decorrelated jitter ([Jitter]).
// Each [ContentionRow] is the mean of many trials: the writes sent and the
// time until the last one committed.
//
// [Outage] is scenario 2: a thousand clients each sending a steady stream
// of requests to a service that is down for a minute and then returns with
// finite capacity. Each request runs the retrying transport's attempt loop
// under an [OutagePolicy]: the transport's full-jitter backoff or, for a
// hint, its server-hint wait; hints read with [retry.ParseRetryAfter] and
// [ratelimit.Parse] from the service's response fields; re-sends asked of a
// [budget.Budget] per client; and, with pacing, a [ratelimit.Pacer] per client
// that holds requests until a spent quota resets and then releases them at
// the quota the service announced, plus the jitter the pacer sized. [OutagePolicies] are no retry, retry,
// retry with a budget, and the budget with pacing. Each [OutageRun] reports
// the load amplification while the service was down, the time it took to
// recover, the share of requests that succeeded, and the load per second.
//
// Overload control has four scenarios of its own (decision record 315).
// In the three on the outage model, each client of an [OutagePolicy] with
// Overload set has its own [breaker.Breaker], asked about every attempt
// with the virtual instant. [OverloadOutage] compares no retry, the budget with pacing and
// [SteadyPolicy] (those plus the breaker) through the outage and two
// windows after it; [Flapping] through a service down and up in turn;
// [AllPolicies] puts every policy side by side. [WriteOverloadTable] shows
// the attempts sent while the service was down against no retry's.
// [Limiter] is a fan-out against a limiter that answers 429 without any
// header, under retry alone and [SteadyPolicy], whose breaker learns the
// limiter's window from its first run of 429s and books the sends in its
// windows, with AIMD on the concurrency; [WriteLimiterTable] shows the time to
// finish against the limiter's floor and the 429s drawn.
//
// [WriteContentionTable] and [WriteOutageTable] write fixed-width text
// tables; [WriteOutageSVG] writes a chart of the load on the service over
// time, one line per policy, as plain SVG. Nothing is printed unless one of
// these is called. The models, their parameters and the reasons for them
// are recorded in the decision records 0100 to 0109; 0107 has the goals as
// measured, 0108 the sizes the tests check them at and 0109 how pacing came
// to recover.
package simulate

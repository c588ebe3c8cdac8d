// Package liveness records when data last arrived for one logical call, so
// that a retry loop can bound silence rather than length.
//
// A [Tracker] holds one progress stamp. Anything that sees data arrive (a
// response handed to the caller, body bytes read, a page decoded) calls
// [Tracker.Mark]. Time that the client spent waiting on purpose, such as
// sleeping off a server-named Retry-After or queuing for a concurrency slot,
// is not silence: it is given back with [Tracker.Credit], which moves the stamp
// forward by the measured amount but never past the present, because a stamp
// in the future would switch the bound off.
//
// The tracker travels in a [context.Context] ([With], [From], [Ensure]), so a
// page walk or a fan-out can share one tracker across many requests and the
// budget measures silence across the whole job.
//
// The package also carries the one request that changes how an attempt reads
// a body: [WithBodyInAttempt] asks the retrying transport to read the whole
// body inside the attempt, so a reset, a truncation or a stall mid-body is a
// failed attempt that can be re-sent instead of a corrupt result. Its bound,
// [BoundReads], fails a read that waits too long for data with a
// [*ReadTimeoutError]; the body layer bounds the bodies it hands over with it
// too.
package liveness

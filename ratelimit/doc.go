// Package ratelimit reads the rate-limit quotas HTTP responses announce and
// paces requests by them. It uses only the standard library and takes time
// as a parameter, so it can be used on its own, as golang.org/x/time/rate
// is, and tested without a clock.
//
// [Parse] reads a response's quota fields: every form of the IETF httpapi
// draft (the structured RateLimit and RateLimit-Policy fields and their
// earlier forms), and the common X-RateLimit-* fields with a reset in
// seconds or as a Unix time. [IsRateLimit] tells a refusal for rate,
// GitHub's 403s included, from any other.
//
// A [Limiter] answers the two questions a client asks before and after
// each request: may it be sent now, or how long must it wait
// ([Limiter.Hold]), and what did its response announce
// ([Limiter.Observe]). A [Pacer] answers them for one process: when a
// response says a quota is spent, the requests that draw it wait for its
// reset, released at the announced rate rather than all at once.
// [Route] names what a request draws for named quotas. Every window a
// response announces ([Windows]) is held at once: a request waits for the
// latest reset among the spent windows it draws. [Pacer.Reserve] leaves
// part of every window to other users of the key.
//
// [ETA] computes how long a number of requests takes at the earliest by
// the windows known and a measured rate; [Pacer.ETA] does it by the
// windows the pacer heard of. [ParseProblem] reads the draft's
// quota-exceeded and temporary-reduced-capacity problem bodies, and
// [Problem.Spend] turns them into the windows to observe.
//
// A fleet of processes on one API key paces as one client through a
// [SharedPacer] on a [Leaser], a store several processes reach (the
// redisquota module implements one on Redis). Permits are taken in leases,
// so one store call serves many requests; every call has a short deadline
// ([StoreTimeout]), and a store that fails or is slow is answered by the
// local Pacer, never by failing or stalling a request.
package ratelimit

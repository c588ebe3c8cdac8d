// Package redisquota shares steady's retry budget and rate-limit quotas
// between processes through Redis, so a fleet of workers on one API key
// spends one quota and one retry budget rather than one each.
//
// A [Store] implements both store seams of steady's policy packages:
// [budget.Store] for [budget.Budget.Store] and [ratelimit.Leaser] for a
// [ratelimit.SharedPacer] in [retry.Policy.Pacer]. Each call is one Lua
// script, run atomically in one round trip, on Redis' own clock (TIME), so
// the processes' clocks never have to agree. Processes take permits in
// leases, a batch at a time, so steady traffic costs about one round trip per ten requests.
//
// Keys live under a namespace the caller names ("steady:{name}:..."); quota
// keys carry a fingerprint of the quota's name, never an API key. A store
// that fails or runs past the seams' short deadline
// ([ratelimit.StoreTimeout], [budget.StoreTimeout]) is answered locally:
// requests are never failed or stalled by it. [Store.OnChange] hears once when the store is lost and once
// when it is back. The Redis client logs failed dials through its own
// logger; a program that reports the store's health itself silences it
// with redis.SetLogger, as the steady command does.
package redisquota

// Package config reads steady's settings from the environment under a
// prefix, and reports a bad value with an error that says exactly what was
// wrong and what would have been accepted.
//
// [FromEnv] reads these variables (shown for the default prefix STEADY):
//
//	STEADY_RETRIES          re-sends after the first attempt, a whole number >= 0 (default 4; 0 disables retry)
//	STEADY_STALL_TIMEOUT    seconds of silence allowed, finite >= 0, decimals allowed (default 60; 0 disables the stall budget)
//	STEADY_CONCURRENT       requests in flight at once, a whole number >= 1 (default 32)
//	STEADY_API_KEY          the API key, a string without control characters (default none)
//	STEADY_CONNECT_TIMEOUT  seconds to connect (dial and TLS handshake), > 0 (default 10)
//	STEADY_READ_TIMEOUT     seconds one attempt waits for headers, and for each silence in the body, >= 0 (default 60; 0 disables)
//	STEADY_MAX_TIME         seconds the whole command or call may take, >= 0 (default 0, no limit)
//	STEADY_MAX_RETRY_AFTER  the longest server-named wait slept off, seconds > 0 (default 60)
//
// Surrounding whitespace is ignored, and a variable that is unset, empty or
// only whitespace means its default. [FromLookup] does the same from any
// lookup function, so tests and the command line can supply values without
// touching the process environment.
//
// A value that does not parse gives a [*ConfigurationError] naming the
// variable, the value as given and the accepted form; every bad variable is
// reported in one go (see [FromLookup]). errors.Is(err, [ErrConfiguration])
// holds for all of them. The API key is never echoed: not in an error, not
// when a [Settings] is formatted with any fmt verb, logged through log/slog
// or encoded as JSON.
//
// config is a leaf: it imports nothing but the standard library, and in
// particular not the retry package. The conversion from [Settings] to a
// retry policy lives there; the field documentation of [Settings] states
// the exact meaning it must preserve (Retries is MaxAttempts-1, and a
// StallTimeout of 0 means disabled, not "use the default").
package config

// Package steady makes HTTP API clients survive the real internet: bounded
// retry with a no-progress budget, host-scoped credentials, safe page walks
// and bounded fan-out, wired into one [net/http] stack.
package steady

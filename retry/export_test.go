package retry

import "time"

// Backoff exposes the pure backoff function to the external tests.
func Backoff(n int, r float64, initial, max time.Duration) time.Duration {
	return backoff(n, r, initial, max)
}

// ServerWait exposes the server-hint wait.
func ServerWait(hint time.Duration, r float64, maxBackoff, maxRetryAfter time.Duration) time.Duration {
	return serverWait(hint, r, maxBackoff, maxRetryAfter)
}

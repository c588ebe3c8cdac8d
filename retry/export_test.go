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

// Watched reports how many bodies the transport's watchdog lists and
// whether its timer is set.
func (t *Transport) Watched() (bodies int, timerSet bool) {
	t.watch.mu.Lock()
	defer t.watch.mu.Unlock()
	for b := t.watch.head; b != nil; b = b.next {
		bodies++
	}
	return bodies, t.watch.timer != nil
}

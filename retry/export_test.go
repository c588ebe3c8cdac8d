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

// States returns how many quota states the pacer keeps.
func (p *Pacer) States() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}

// Locked runs f with the pacer's lock held, to show f takes no lock.
func (p *Pacer) Locked(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
}

package retry

import "time"

// delay returns the wait before re-send n (1-based) under p, with r in
// [0,1): full jitter (see backoff). The previous wait is not used; it stays
// in the signature for the loop's callers.
func (p *Policy) delay(n int, _ time.Duration, r float64) time.Duration {
	return backoff(n, r, p.InitialBackoff, p.MaxBackoff)
}

// backoff returns the wait before re-send n (1-based): full jitter over
// (0, min(max, initial·2^(n-1))]. r is in [0,1); using 1-r keeps the wait
// above zero, so no re-send is ever immediate. The ceiling doubles by loop
// rather than by shifting, so no n overflows.
func backoff(n int, r float64, initial, max time.Duration) time.Duration {
	return jitter(r, backoffCeiling(n, initial, max))
}

// backoffCeiling returns min(max, initial·2^(n-1)) without overflow.
func backoffCeiling(n int, initial, max time.Duration) time.Duration {
	ceiling := min(initial, max)
	for i := 1; i < n && ceiling < max; i++ {
		if ceiling > max/2 {
			return max
		}
		ceiling *= 2
	}
	return ceiling
}

// jitter returns a duration in (0, ceiling] for r in [0,1).
func jitter(r float64, ceiling time.Duration) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	if r < 0 || r >= 1 || r != r {
		r = 0
	}
	f := (1 - r) * float64(ceiling)
	if f >= float64(ceiling) { // also catches the float rounding of huge ceilings
		return ceiling
	}
	return max(time.Duration(f), 1)
}

// serverWait returns the wait for a server hint: the hint plus a jitter,
// capped at maxRetryAfter, so callers handed the same hint do not wake
// together and a hint of 0 is never an immediate re-send. The jitter is
// sized to the hint: up to a tenth of it, at least 50ms and at most
// min(maxBackoff, 1s), so a hint of 1s waits at most 1.1s, not 2s.
func serverWait(hint time.Duration, r float64, maxBackoff, maxRetryAfter time.Duration) time.Duration {
	j := jitter(r, serverJitter(hint, maxBackoff))
	if hint > maxRetryAfter-j {
		return maxRetryAfter
	}
	return hint + j
}

// serverJitter is the ceiling of the jitter added to a server's hint.
func serverJitter(hint, maxBackoff time.Duration) time.Duration {
	return min(maxBackoff, time.Second, max(hint/10, minServerJitter))
}

const minServerJitter = 50 * time.Millisecond

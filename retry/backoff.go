package retry

import "time"

// backoff returns the wait before re-send n (1-based): full jitter over
// (0, min(max, initial·2^(n-1))]. r is in [0,1); using 1-r keeps the wait
// above zero, so no re-send is ever immediate. The ceiling doubles by loop
// rather than by shifting, so no n overflows.
func backoff(n int, r float64, initial, max time.Duration) time.Duration {
	ceiling := min(initial, max)
	for i := 1; i < n && ceiling < max; i++ {
		if ceiling > max/2 {
			ceiling = max
			break
		}
		ceiling *= 2
	}
	return jitter(r, ceiling)
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

// serverWait returns the wait for a server hint: the hint plus a jitter of up
// to min(maxBackoff, 1s), capped at maxRetryAfter, so callers handed the same
// hint do not wake together and a hint of 0 is never an immediate re-send.
func serverWait(hint time.Duration, r float64, maxBackoff, maxRetryAfter time.Duration) time.Duration {
	j := jitter(r, min(maxBackoff, time.Second))
	if hint > maxRetryAfter-j {
		return maxRetryAfter
	}
	return hint + j
}

package simulate

import (
	"time"

	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// Jitter chooses how a contention policy spreads its backoff. The retrying
// transport uses full jitter only (architecture decision 4); the others are
// the alternatives the contention study measures it against.
type Jitter uint8

const (
	// JitterFull waits U(0, ceiling]: the transport's own.
	JitterFull Jitter = iota
	// JitterEqual waits ceiling/2 + U(0, ceiling/2].
	JitterEqual
	// JitterNone waits the ceiling itself: plain exponential backoff, whose
	// synchronized re-sends collide again.
	JitterNone
	// JitterDecorrelated waits U(initial, 3·previous], capped, growing from
	// the previous wait rather than from the attempt number.
	JitterDecorrelated
)

// The waits below model the transport's: the same formulas (architecture
// decisions 4 and 5) over a policy's bounds with config's defaults. A change
// to the transport's waits is made here too; TestWaitsAreTheTransports
// holds the copies to the transport itself.

// bounds returns p's backoff and Retry-After bounds with their defaults.
func bounds(p retry.Policy) (initial, maxBackoff, maxRetryAfter time.Duration) {
	initial, maxBackoff, maxRetryAfter = p.InitialBackoff, p.MaxBackoff, p.MaxRetryAfter
	if initial == 0 {
		initial = config.DefaultInitialBackoff
	}
	if maxBackoff == 0 {
		maxBackoff = max(config.DefaultMaxBackoff, initial)
	}
	if maxRetryAfter == 0 {
		maxRetryAfter = config.DefaultMaxRetryAfter
	}
	return initial, maxBackoff, maxRetryAfter
}

// delay returns the wait before retry n (1-based) under p spread by j, where
// prev is the previous wait (used by JitterDecorrelated) and r is in [0,1).
func delay(p retry.Policy, j Jitter, n int, prev time.Duration, r float64) time.Duration {
	initial, maxBackoff, _ := bounds(p)
	c := ceiling(n, initial, maxBackoff)
	switch j {
	case JitterEqual:
		return c - c/2 + spread(r, c/2)
	case JitterNone:
		return c
	case JitterDecorrelated:
		lo := min(initial, maxBackoff)
		if prev <= 0 {
			prev = lo // the first wait grows from the initial backoff
		}
		hi := maxBackoff
		if prev <= maxBackoff/3 {
			hi = 3 * prev
		}
		if hi <= lo {
			return lo
		}
		return lo + spread(r, hi-lo)
	}
	return spread(r, c)
}

// serverWait is the wait for a server's hint: the hint plus a jitter of up
// to a tenth of it (at least 50ms, at most min(MaxBackoff, 1s)), capped at
// MaxRetryAfter.
func serverWait(p retry.Policy, hint time.Duration, r float64) time.Duration {
	_, maxBackoff, maxRetryAfter := bounds(p)
	j := spread(r, min(maxBackoff, time.Second, max(hint/10, 50*time.Millisecond)))
	if hint > maxRetryAfter-j {
		return maxRetryAfter
	}
	return hint + j
}

// limitedWait is the wait before re-sending after a 429 without quota
// fields whose re-send the breaker books in a window of the host's
// limiter: a jitter of at most min(InitialBackoff, 50ms), so that it is not
// immediate; the breaker's hold does the spacing.
func limitedWait(p retry.Policy, r float64) time.Duration {
	initial, _, _ := bounds(p)
	return spread(r, min(initial, 50*time.Millisecond))
}

// holdWait is a pacing hold plus the jitter the pacer sized for it, capped at
// MaxBackoff and never past MaxRetryAfter.
func holdWait(p retry.Policy, h ratelimit.Hold, r float64) time.Duration {
	_, maxBackoff, maxRetryAfter := bounds(p)
	return h.Wait + spread(r, min(h.Jitter, maxBackoff, maxRetryAfter-h.Wait))
}

// ceiling returns min(maxBackoff, initial·2^(n-1)) without overflow.
func ceiling(n int, initial, maxBackoff time.Duration) time.Duration {
	c := min(initial, maxBackoff)
	for i := 1; i < n && c < maxBackoff; i++ {
		if c > maxBackoff/2 {
			return maxBackoff
		}
		c *= 2
	}
	return c
}

// spread returns a duration in (0, c] for r in [0,1).
func spread(r float64, c time.Duration) time.Duration {
	if c <= 0 {
		return 0
	}
	if r < 0 || r >= 1 || r != r {
		r = 0
	}
	f := (1 - r) * float64(c)
	if f >= float64(c) {
		return c
	}
	return max(time.Duration(f), 1)
}

package retry

import "time"

// Jitter chooses how a backoff is spread. Full jitter, the default, is the
// one to use; the others exist so that their cost can be measured (see the
// simulator of the command line) and for services that document one.
type Jitter uint8

const (
	// JitterFull waits U(0, ceiling]: the fewest calls and the earliest
	// completion under contention.
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

// Delay returns the wait before re-send n (1-based) under p, where prev is
// the previous wait (used by [JitterDecorrelated]) and r is in [0,1). It is
// the pure function the transport itself uses.
func (p Policy) Delay(n int, prev time.Duration, r float64) time.Duration {
	q := p.withDefaults()
	return q.delay(n, prev, r)
}

func (p *Policy) delay(n int, prev time.Duration, r float64) time.Duration {
	switch p.Jitter {
	case JitterEqual:
		c := backoffCeiling(n, p.InitialBackoff, p.MaxBackoff)
		return c - c/2 + jitter(r, c/2)
	case JitterNone:
		return backoffCeiling(n, p.InitialBackoff, p.MaxBackoff)
	case JitterDecorrelated:
		lo := min(p.InitialBackoff, p.MaxBackoff)
		if prev <= 0 {
			prev = lo // the first wait grows from the initial backoff
		}
		hi := p.MaxBackoff
		if prev <= p.MaxBackoff/3 {
			hi = 3 * prev
		}
		if hi <= lo {
			return lo
		}
		return lo + jitter(r, hi-lo)
	}
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

// ServerWait returns the wait the transport takes for a server hint under p,
// with r in [0,1): the pure function the transport itself uses.
func (p Policy) ServerWait(hint time.Duration, r float64) time.Duration {
	q := p.withDefaults()
	return serverWait(hint, r, q.MaxBackoff, q.MaxRetryAfter)
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

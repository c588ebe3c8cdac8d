package breaker

import "time"

// rejection is the client-side throttling probability for a window that
// counted requests, of which the host accepted accepts:
// max(0, (requests − k·accepts)/(requests + 1)), capped at maxP.
func rejection(requests, accepts int, k, maxP float64) float64 {
	p := (float64(requests) - k*float64(accepts)) / float64(requests+1)
	return min(max(p, 0), maxP)
}

// admitThrottle draws whether a first attempt is rejected. A rejection
// counts as a request (the formula's rising side); an admitted attempt is
// counted when its verdict comes, so one abandoned counts nowhere. Below
// the floor nothing is rejected.
func (e *entry) admitThrottle(now time.Time, cfg *Config) error {
	s := e.load.sum(now)
	if s.n < cfg.ThrottleFloor {
		return nil
	}
	p := rejection(s.n, s.k, cfg.K, cfg.MaxRejection)
	if p == 0 || cfg.Rand() >= p {
		return nil
	}
	e.load.add(now, tally{1, 0})
	return &Error{Host: e.host, Err: ErrThrottled, Wait: e.load.width}
}

// recordThrottle counts a first attempt's verdict: every answer but a
// failure is accepted (a 429 is the pacer's, not an outage).
func (e *entry) recordThrottle(now time.Time, t *Ticket, o Outcome) {
	if !t.first || o == Abandoned {
		return
	}
	acc := 1
	if o == Failure {
		acc = 0
	}
	e.load.add(now, tally{1, acc})
}

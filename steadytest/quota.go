package steadytest

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// QuotaHeaders selects which forms of rate-limit headers a [Quota] sends;
// combine them with |. Real APIs use every one of these, sometimes two at
// once, so a client should be tested against each.
type QuotaHeaders uint8

const (
	// XRateLimit: X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset (seconds until the window ends, or a Unix time with
	// [Quota.EpochReset]).
	XRateLimit QuotaHeaders = 1 << iota
	// RateLimitSplit: RateLimit-Limit, RateLimit-Remaining and
	// RateLimit-Reset (seconds), the three fields of the early IETF drafts.
	RateLimitSplit
	// RateLimitCombined: one field, RateLimit: limit=L, remaining=R, reset=S.
	RateLimitCombined
	// RateLimitStructured: the structured fields of the later IETF drafts,
	// RateLimit-Policy: "default";q=L;w=W and RateLimit: "default";r=R;t=S.
	RateLimitStructured
)

// A Quota admits Limit data requests per Window. A window opens with the
// first request after the previous one ended; once Limit requests were
// admitted in it, the rest get 429 Too Many Requests with Retry-After set to
// the seconds until it ends. Every data response carries the quota headers.
// The zero value sets no quota. Windows follow the time package's clock, so
// they are virtual inside a testing/synctest bubble.
type Quota struct {
	// Limit is the number of requests admitted per window; zero means no quota.
	Limit int
	// Window is the length of a window. Zero means one minute.
	Window time.Duration
	// Headers selects the header forms. Zero means XRateLimit|RateLimitCombined.
	Headers QuotaHeaders
	// EpochReset sends X-RateLimit-Reset as the Unix time (seconds) at which
	// the window ends, as some large APIs do, instead of seconds from now.
	EpochReset bool
}

func (q Quota) window() time.Duration {
	if q.Window > 0 {
		return q.Window
	}
	return time.Minute
}

func (q Quota) headers() QuotaHeaders {
	if q.Headers != 0 {
		return q.Headers
	}
	return XRateLimit | RateLimitCombined
}

func (q Quota) validate() error {
	bad := func(field, format string, args ...any) error {
		return &OptionsError{Field: "Faults.Quota." + field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case q.Limit < 0:
		return bad("Limit", "%d is negative", q.Limit)
	case q.Window < 0:
		return bad("Window", "%v is negative", q.Window)
	case q.Headers >= RateLimitStructured<<1:
		return bad("Headers", "unknown header forms %#x", q.Headers)
	case q.Headers&RateLimitCombined != 0 && q.Headers&RateLimitStructured != 0:
		return bad("Headers", "RateLimitCombined and RateLimitStructured both write the RateLimit field; choose one")
	}
	return nil
}

// quotaState counts requests in the current window.
type quotaState struct {
	mu    sync.Mutex
	start time.Time // zero until the first request
	used  int
}

// take admits one request at now if the window has room, and reports what
// is left of the window after it.
func (s *quotaState) take(q Quota, now time.Time) (ok bool, remaining int, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := q.window()
	if s.start.IsZero() || !now.Before(s.start.Add(w)) {
		s.start, s.used = now, 0
	}
	end = s.start.Add(w)
	if s.used >= q.Limit {
		return false, 0, end
	}
	s.used++
	return true, q.Limit - s.used, end
}

// ceilSeconds rounds d up to whole seconds, so a client that waits the
// number it is told never arrives early.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// setQuotaHeaders writes the forms q asks for.
func setQuotaHeaders(h http.Header, q Quota, remaining int, now, end time.Time) {
	limit := strconv.Itoa(q.Limit)
	rem := strconv.Itoa(remaining)
	reset := strconv.FormatInt(ceilSeconds(end.Sub(now)), 10)
	forms := q.headers()
	if forms&XRateLimit != 0 {
		h.Set("X-RateLimit-Limit", limit)
		h.Set("X-RateLimit-Remaining", rem)
		if q.EpochReset {
			h.Set("X-RateLimit-Reset", strconv.FormatInt(ceilUnix(end), 10))
		} else {
			h.Set("X-RateLimit-Reset", reset)
		}
	}
	if forms&RateLimitSplit != 0 {
		h.Set("RateLimit-Limit", limit)
		h.Set("RateLimit-Remaining", rem)
		h.Set("RateLimit-Reset", reset)
	}
	if forms&RateLimitCombined != 0 {
		h.Set("RateLimit", "limit="+limit+", remaining="+rem+", reset="+reset)
	}
	if forms&RateLimitStructured != 0 {
		w := strconv.FormatInt(ceilSeconds(q.window()), 10)
		h.Set("RateLimit-Policy", `"default";q=`+limit+`;w=`+w)
		h.Set("RateLimit", `"default";r=`+rem+`;t=`+reset)
	}
}

// ceilUnix returns t as Unix seconds, rounded up.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

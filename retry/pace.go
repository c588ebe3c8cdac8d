package retry

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Quota is what a response said about its rate limit.
type Quota struct {
	Remaining int64         // requests left in the window
	Reset     time.Duration // until the window resets; 0 when not said
}

// ParseQuota reads the rate-limit fields of h at time now: the IETF httpapi
// draft's structured `RateLimit` field (`"default";r=0;t=30`, with
// `RateLimit-Policy`), its earlier forms (`RateLimit: limit=100,
// remaining=0, reset=30` and separate `RateLimit-Remaining` and
// `RateLimit-Reset` fields), and the common `X-RateLimit-Remaining` with
// `X-RateLimit-Reset` (seconds, or a Unix time when it is 10^8 or more:
// no quota window lasts three years). When several quotas are given the tightest one counts. Malformed
// fields are ignored; ok is false when nothing usable was found.
func ParseQuota(h http.Header, now time.Time) (q Quota, ok bool) {
	best := Quota{Remaining: -1}
	consider := func(remaining int64, reset time.Duration) {
		if remaining < 0 {
			return
		}
		if !ok || remaining < best.Remaining || (remaining == best.Remaining && reset > best.Reset) {
			best = Quota{Remaining: remaining, Reset: max(reset, 0)}
			ok = true
		}
	}
	for _, v := range h.Values("RateLimit") {
		for _, item := range splitList(v) {
			r, t, found := parseRateLimitItem(item)
			if found {
				consider(r, t)
			}
		}
	}
	for _, prefix := range []string{"RateLimit-", "X-RateLimit-"} {
		rem, err := strconv.ParseInt(strings.TrimSpace(h.Get(prefix+"Remaining")), 10, 64)
		if err != nil {
			continue
		}
		consider(rem, parseReset(h.Get(prefix+"Reset"), now))
	}
	return best, ok
}

// parseRateLimitItem reads one member of a RateLimit field: either the
// structured form with r= and t= parameters, or the older key=value form.
func parseRateLimitItem(item string) (remaining int64, reset time.Duration, ok bool) {
	remaining = -1
	for _, part := range strings.Split(item, ";") {
		k, v, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			continue
		}
		n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(v), `"`), 10, 64)
		if err != nil || n < 0 {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "r", "remaining":
			remaining, ok = n, true
		case "t", "reset":
			reset = time.Duration(min(n, 1<<31)) * time.Second
		}
	}
	return remaining, reset, ok
}

// splitList splits a field value at commas outside quoted strings. The older
// draft form "limit=100, remaining=0, reset=30" is one quota whose members
// are comma-separated; it is joined back when no member has a ';'.
func splitList(v string) []string {
	var items []string
	start, quoted := 0, false
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			quoted = !quoted
		case '\\':
			if quoted {
				i++
			}
		case ',':
			if !quoted {
				items = append(items, v[start:i])
				start = i + 1
			}
		}
	}
	items = append(items, v[start:])
	if !strings.Contains(v, ";") {
		return []string{strings.Join(items, ";")}
	}
	return items
}

func parseReset(v string, now time.Time) time.Duration {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n < 0 || n != n || n > 1e12 {
		return 0
	}
	if n >= 1e8 { // a Unix time, as some services send: no quota window lasts three years
		return max(time.Unix(int64(n), 0).Sub(now), 0)
	}
	return time.Duration(n * float64(time.Second))
}

// pacer holds requests to hosts whose quota is spent until the reset.
type pacer struct {
	limited atomic.Int32 // hosts currently held; lets the common case skip the lock
	mu      sync.Mutex
	until   map[string]time.Time
}

// hold returns how long a request to host must wait at now.
func (p *pacer) hold(host string, now time.Time) time.Duration {
	if p.limited.Load() == 0 {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.until[host]
	if !ok {
		return 0
	}
	if d := until.Sub(now); d > 0 {
		return d
	}
	delete(p.until, host)
	p.limited.Add(-1)
	return 0
}

// observe records a response's quota for host.
func (p *pacer) observe(host string, q Quota, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, held := p.until[host]
	if q.Remaining > 0 || q.Reset <= 0 {
		if held {
			delete(p.until, host)
			p.limited.Add(-1)
		}
		return
	}
	if p.until == nil {
		p.until = make(map[string]time.Time)
	}
	p.until[host] = now.Add(q.Reset)
	if !held {
		p.limited.Add(1)
	}
}

// hasQuotaFields is a cheap check before parsing.
func hasQuotaFields(h http.Header) bool {
	for _, k := range [...]string{"Ratelimit", "Ratelimit-Remaining", "X-Ratelimit-Remaining"} {
		if _, ok := h[k]; ok {
			return true
		}
	}
	return false
}

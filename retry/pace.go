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
	// Limit and Window are the quota itself, requests per window, when the
	// server announced them (RateLimit-Policy's q and w); 0 otherwise.
	Limit  int64
	Window time.Duration
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
	if ok {
		best.Limit, best.Window = parsePolicy(h.Values("RateLimit-Policy"))
	}
	return best, ok
}

// parsePolicy reads the tightest quota of RateLimit-Policy fields
// (`"default";q=100;w=60`): the one allowing the fewest requests a second.
func parsePolicy(values []string) (limit int64, window time.Duration) {
	for _, v := range values {
		for _, item := range splitList(v) {
			var q int64
			var w time.Duration
			for _, part := range strings.Split(item, ";") {
				k, val, found := strings.Cut(strings.TrimSpace(part), "=")
				if !found {
					continue
				}
				n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
				if err != nil || n <= 0 {
					continue
				}
				switch strings.ToLower(strings.TrimSpace(k)) {
				case "q":
					q = n
				case "w":
					w = time.Duration(min(n, 1<<31)) * time.Second
				}
			}
			if q > 0 && w > 0 && (limit == 0 || float64(q)/w.Seconds() < float64(limit)/window.Seconds()) {
				limit, window = q, w
			}
		}
	}
	return limit, window
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

// A Pacer holds requests to hosts whose quota is spent. When a response
// says no requests remain until a reset, requests to that host wait for the
// reset; when the server also announced its quota (RateLimit-Policy), the
// requests held are then released one every Window/Limit rather than all at
// once, so a fleet held to one reset does not spend the new window in its
// first instant and run out again. The zero value is ready to use and safe
// for concurrent use; the transport keeps one per [Transport] when
// [Policy.Pace] is set. It is exported for simulations that drive the same
// arithmetic.
type Pacer struct {
	limited atomic.Int32 // hosts with state; lets the common case skip the lock
	mu      sync.Mutex
	hosts   map[string]*paceState
}

type paceState struct {
	until    time.Time     // the reset
	next     time.Time     // the next free slot while held requests drain
	interval time.Duration // between released requests; 0: all at the reset
}

// Hold returns how long a request to host must wait at now, and whether the
// wait is a slot of a spaced release (which needs no further jitter). It
// reserves the slot: call it once per request.
func (p *Pacer) Hold(host string, now time.Time) (wait time.Duration, spaced bool) {
	if p.limited.Load() == 0 {
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.hosts[host]
	if !ok {
		return 0, false
	}
	slot := st.until
	if st.next.After(slot) {
		slot = st.next
	}
	if !slot.After(now) {
		// The reset passed and the held requests have drained.
		delete(p.hosts, host)
		p.limited.Add(-1)
		return 0, false
	}
	st.next = slot.Add(st.interval)
	return slot.Sub(now), st.interval > 0
}

// Observe records a response's quota for host at now.
func (p *Pacer) Observe(host string, q Quota, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, held := p.hosts[host]
	if q.Remaining > 0 || q.Reset <= 0 {
		if held && !st.next.After(now) {
			delete(p.hosts, host)
			p.limited.Add(-1)
		}
		return
	}
	if !held {
		if p.hosts == nil {
			p.hosts = make(map[string]*paceState)
		}
		st = &paceState{}
		p.hosts[host] = st
		p.limited.Add(1)
	}
	st.until = now.Add(q.Reset)
	if q.Limit > 0 && q.Window > 0 {
		st.interval = q.Window / time.Duration(q.Limit)
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

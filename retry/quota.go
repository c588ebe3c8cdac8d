package retry

import (
	"net/http"
	"strings"
	"time"
)

// Quota is what a response said about its rate limit.
type Quota struct {
	Remaining int64         // requests left in the window
	Reset     time.Duration // until the window resets; 0 when not said
	// Limit is the quota itself, requests per window, when the server said
	// it (RateLimit-Policy's q, or RateLimit-Limit, X-RateLimit-Limit, the
	// draft's `limit=`); 0 otherwise. Window is the window when announced
	// (RateLimit-Policy's w, or the draft's earlier `50;w=5`), 0 otherwise.
	Limit  int64
	Window time.Duration
	// ResetUnix is set when the reset came as a Unix time in whole seconds
	// (an X-RateLimit-Reset of 10^8 or more), not as a delay.
	ResetUnix bool
	// Name is the quota's name when the server gave one (a RateLimit
	// item's name, X-RateLimit-Resource): a spent named quota holds only
	// the requests that drew it. "" is a quota of the whole host.
	Name string
}

// MaxQuotaPeriod bounds what one response may announce: a reset or a
// window longer than this is not believed and reads as not said. The
// longest quotas services announce are daily ones.
const MaxQuotaPeriod = 24 * time.Hour

// maxQuotaLimit bounds an announced limit; a larger one is not believed.
const maxQuotaLimit = 1 << 30

// ParseQuota reads the rate-limit fields of h at time now: the IETF httpapi
// draft's structured `RateLimit` field (`"default";r=0;t=30`, with
// `RateLimit-Policy: "default";q=100;w=60`), its earlier forms (`RateLimit:
// limit=100, remaining=0, reset=30`, separate `RateLimit-Remaining` and
// `RateLimit-Reset` fields, `RateLimit-Policy: 100;w=60`), and the common
// `X-RateLimit-Remaining` with `X-RateLimit-Reset` (seconds, or a Unix time
// when it is 10^8 or more: no quota window lasts three years) and
// `X-RateLimit-Resource`. When several quotas are given the tightest one
// counts: the fewest requests remaining, then the latest reset. Malformed
// fields, and resets or windows beyond [MaxQuotaPeriod], are ignored; ok is
// false when nothing usable was found. It allocates nothing.
func ParseQuota(h http.Header, now time.Time) (q Quota, ok bool) {
	var best quotaPick
	for _, v := range h["Ratelimit"] {
		sep := byte(';')
		if strings.IndexByte(v, ';') < 0 {
			sep = ',' // the older `limit=100, remaining=0, reset=30`: one quota
		}
		for rest := v; rest != ""; {
			var item string
			if sep == ';' {
				item, rest = nextListItem(rest)
			} else {
				item, rest = rest, ""
			}
			if c, found := parseRateLimitItem(item, sep); found {
				best.consider(c)
			}
		}
	}
	for _, f := range [...]struct{ remaining, reset, limit, name string }{
		{"Ratelimit-Remaining", "Ratelimit-Reset", "Ratelimit-Limit", ""},
		{"X-Ratelimit-Remaining", "X-Ratelimit-Reset", "X-Ratelimit-Limit", "X-Ratelimit-Resource"},
	} {
		rem, found := parseCount(first(h, f.remaining))
		if !found {
			continue
		}
		c := Quota{Remaining: rem}
		c.Reset, c.ResetUnix = parseReset(first(h, f.reset), now)
		if n, ok := parseCount(first(h, f.limit)); ok && n > 0 && n <= maxQuotaLimit {
			c.Limit = n
		}
		if f.name != "" {
			c.Name = trimOWS(first(h, f.name))
		}
		best.consider(c)
	}
	if !best.ok {
		return Quota{Remaining: -1}, false
	}
	if limit, window := parsePolicy(h["Ratelimit-Policy"], best.q.Name, best.q.Limit); limit > 0 {
		best.q.Limit, best.q.Window = limit, window
	}
	return best.q, true
}

type quotaPick struct {
	q  Quota
	ok bool
}

func (p *quotaPick) consider(c Quota) {
	if c.Remaining < 0 {
		return
	}
	if !p.ok || c.Remaining < p.q.Remaining || (c.Remaining == p.q.Remaining && c.Reset > p.q.Reset) {
		p.q, p.ok = c, true
	}
}

func first(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// parsePolicy reads the quota of RateLimit-Policy fields: the item named
// name when the quota has one; else, when the quota said its limit, an item
// of that limit (a policy of another limit belongs to another limiter whose
// fields the response also carries); else the tightest (the fewest
// requests a second). Items are `"name";q=100;w=60` or the earlier
// `100;w=60`.
func parsePolicy(values []string, name string, said int64) (limit int64, window time.Duration) {
	for _, v := range values {
		for rest := v; rest != ""; {
			var item string
			item, rest = nextListItem(rest)
			itemName, q, w := parsePolicyItem(item)
			if q <= 0 || w <= 0 {
				continue
			}
			if name != "" || said > 0 {
				if (name != "" && itemName == name) || (name == "" && q == said) {
					return q, w
				}
				continue
			}
			if limit == 0 || float64(q)/w.Seconds() < float64(limit)/window.Seconds() {
				limit, window = q, w
			}
		}
	}
	return limit, window
}

func parsePolicyItem(item string) (name string, q int64, w time.Duration) {
	for i, rest := 0, item; rest != ""; i++ {
		var part string
		part, rest = cutByte(rest, ';')
		part = trimOWS(part)
		k, val, found := strings.Cut(part, "=")
		if !found {
			if i == 0 {
				if n, ok := parseCount(part); ok {
					q = n // the earlier draft: the quota itself comes first
				} else {
					name = unquote(part)
				}
			}
			continue
		}
		n, ok := parseCount(val)
		if !ok || n <= 0 {
			continue
		}
		switch {
		case strings.EqualFold(trimOWS(k), "q"):
			q = n
		case strings.EqualFold(trimOWS(k), "w"):
			w = seconds(n)
		}
	}
	if q > maxQuotaLimit || w > MaxQuotaPeriod {
		return name, 0, 0
	}
	return name, q, w
}

// parseRateLimitItem reads one member of a RateLimit field: either the
// structured form with r= and t= parameters (separated by ';'), or the older
// key=value form (separated by ',').
func parseRateLimitItem(item string, sep byte) (q Quota, ok bool) {
	q.Remaining = -1
	for i, rest := 0, item; rest != ""; i++ {
		var part string
		part, rest = cutByte(rest, sep)
		part = trimOWS(part)
		k, v, found := strings.Cut(part, "=")
		if !found {
			if i == 0 {
				q.Name = unquote(part)
			}
			continue
		}
		n, valid := parseCount(v)
		if !valid {
			continue
		}
		switch k = trimOWS(k); {
		case strings.EqualFold(k, "r") || strings.EqualFold(k, "remaining"):
			q.Remaining, ok = n, true
		case strings.EqualFold(k, "t") || strings.EqualFold(k, "reset"):
			if d := seconds(n); d <= MaxQuotaPeriod {
				q.Reset = d
			}
		case strings.EqualFold(k, "limit") && n > 0 && n <= maxQuotaLimit:
			q.Limit = n
		}
	}
	return q, ok
}

// nextListItem returns the first member of a comma-separated list and the
// rest, splitting outside quoted strings only.
func nextListItem(v string) (item, rest string) {
	quoted := false
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
				return v[:i], v[i+1:]
			}
		}
	}
	return v, ""
}

func cutByte(s string, sep byte) (before, after string) {
	if i := strings.IndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

func trimOWS(s string) string { return strings.Trim(s, " \t") }

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// parseCount reads a non-negative decimal integer, optionally quoted and
// surrounded by white space, of at most 18 digits. Unlike strconv it
// allocates nothing on bad input, which a parser of every response sees.
func parseCount(s string) (int64, bool) {
	s = unquote(trimOWS(s))
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func seconds(n int64) time.Duration {
	if n > int64(MaxQuotaPeriod/time.Second) {
		return MaxQuotaPeriod + time.Second // beyond any bound, without overflow
	}
	return time.Duration(n) * time.Second
}

// parseReset reads a reset: decimal seconds until it, or a Unix time when
// 10^8 or more (unix is then set). A reset beyond MaxQuotaPeriod, or
// malformed, is 0: not said.
func parseReset(v string, now time.Time) (d time.Duration, unix bool) {
	v = trimOWS(v)
	whole, frac, _ := strings.Cut(v, ".")
	n, ok := parseCount(whole)
	if !ok {
		return 0, false
	}
	var f time.Duration
	if frac != "" {
		scale := time.Second
		for i := 0; i < len(frac); i++ {
			c := frac[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			scale /= 10
			f += time.Duration(c-'0') * scale
		}
	}
	if n >= 1e8 { // a Unix time, as some services send: no quota window lasts three years
		if n > 1e12 {
			return 0, false
		}
		d, unix = max(time.Unix(n, int64(f)).Sub(now), 0), frac == ""
	} else {
		d = time.Duration(n)*time.Second + f
	}
	if d > MaxQuotaPeriod {
		return 0, false
	}
	return d, unix
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

package ratelimit

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

// MaxPeriod bounds what one response may announce: a reset or a window
// longer than this is not believed and reads as not said. The longest
// quotas services announce are daily ones.
const MaxPeriod = 24 * time.Hour

// maxLimit bounds an announced limit; a larger one is not believed.
const maxLimit = 1 << 30

// Parse reads the rate-limit fields of h at time now: the IETF httpapi
// draft's structured `RateLimit` field (`"default";r=0;t=30`, with
// `RateLimit-Policy: "default";q=100;w=60`), its earlier forms (`RateLimit:
// limit=100, remaining=0, reset=30`, separate `RateLimit-Remaining` and
// `RateLimit-Reset` fields, `RateLimit-Policy: 100;w=60`), and the common
// `X-RateLimit-Remaining` with `X-RateLimit-Reset` (seconds, or a Unix time
// when it is 10^8 or more: no quota window lasts three years) and
// `X-RateLimit-Resource`. A RateLimit-Policy is read beside the draft's
// own fields (`RateLimit`, `RateLimit-Remaining`), not beside X-RateLimit
// fields alone (ADR 0211). When several quotas are given the tightest one
// counts: the fewest requests remaining, then the latest reset. Malformed
// fields, and resets or windows beyond [MaxPeriod], are ignored; ok is
// false when nothing usable was found, and Remaining is then -1.
func Parse(h http.Header, now time.Time) (q Quota, ok bool) {
	var best pick
	if !collect(h, now, &best) {
		return Quota{Remaining: -1}, false
	}
	if values := h["Ratelimit-Policy"]; len(values) > 0 && draftFields(h) {
		if limit, window := parsePolicy(values, best.q.Name, best.q.Limit); limit > 0 {
			best.q.Limit, best.q.Window = limit, window
		}
	}
	return best.q, true
}

// Windows returns every quota the fields of h announce at now, one per
// name, each read as [Parse] reads one: the tightest of those of the same
// name, with the RateLimit-Policy item of its name (ADR 0320). A response
// with `RateLimit: "burst";r=3;t=20, "daily";r=500;t=3000` gives both
// windows; [Parse] gives the tightest of them. nil when nothing usable was
// found.
func Windows(h http.Header, now time.Time) []Quota {
	var all []Quota
	best := pick{all: &all}
	if !collect(h, now, &best) {
		return nil
	}
	if values := h["Ratelimit-Policy"]; len(values) > 0 && draftFields(h) {
		for i := range all {
			if limit, window := parsePolicy(values, all[i].Name, all[i].Limit); limit > 0 {
				all[i].Limit, all[i].Window = limit, window
			}
		}
	}
	return all
}

// collect reads every quota of h into best and reports whether one was
// usable.
func collect(h http.Header, now time.Time, best *pick) bool {
	rateLimit, remaining, xRemaining := h["Ratelimit"], h["Ratelimit-Remaining"], h["X-Ratelimit-Remaining"]
	for _, v := range rateLimit {
		sep := byte(';')
		if strings.IndexByte(v, ';') < 0 {
			sep = ',' // the older `limit=100, remaining=0, reset=30`: one quota
		}
		parseRateLimit(v, sep, best)
	}
	if len(remaining) > 0 {
		best.consider(parseSplit(h, remaining[0], "Ratelimit-Reset", "Ratelimit-Limit", "", now))
	}
	if len(xRemaining) > 0 {
		best.consider(parseSplit(h, xRemaining[0], "X-Ratelimit-Reset", "X-Ratelimit-Limit", "X-Ratelimit-Resource", now))
	}
	return best.ok
}

// draftFields reports whether h carries the draft's own quota fields,
// beside which alone a RateLimit-Policy is read (ADR 0211).
func draftFields(h http.Header) bool {
	return h["Ratelimit"] != nil || h["Ratelimit-Remaining"] != nil
}

// IsRateLimit reports whether resp refuses a request for its rate: a 429,
// or a 403 whose rate-limit fields say so (ADR 293): a spent quota in any
// form [Parse] reads, or a Retry-After beside quota fields, as GitHub sends
// its secondary limits. A 403 with a Retry-After and no quota field, as a
// firewall's block, is not; nor is a plain 403.
func IsRateLimit(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusForbidden:
		// What remains does not depend on the time the fields are read at.
		if q, ok := Parse(resp.Header, time.Time{}); ok && q.Remaining == 0 {
			return true
		}
		_, after := resp.Header["Retry-After"]
		return after && hasQuotaField(resp.Header)
	}
	return false
}

// quotaFields are the fields only a rate limiter sends, in the canonical
// form of their names.
var quotaFields = []string{
	"Ratelimit", "Ratelimit-Policy", "Ratelimit-Limit", "Ratelimit-Remaining", "Ratelimit-Reset",
	"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "X-Ratelimit-Used", "X-Ratelimit-Resource",
}

func hasQuotaField(h http.Header) bool {
	for _, name := range quotaFields {
		if _, ok := h[name]; ok {
			return true
		}
	}
	return false
}

// pick is the quota that counts among those a response gave: the fewest
// requests remaining, then the latest reset.
type pick struct {
	q  Quota
	ok bool
	// all, when set, collects the tightest quota of each name.
	all *[]Quota
}

func (p *pick) consider(c Quota) {
	if c.Remaining < 0 {
		return
	}
	if p.all != nil {
		p.keep(c)
	}
	if !p.ok || c.Remaining < p.q.Remaining || (c.Remaining == p.q.Remaining && c.Reset > p.q.Reset) {
		p.q, p.ok = c, true
	}
}

// keep adds c to the quotas collected, or puts it in place of the one of
// its name when it is tighter.
func (p *pick) keep(c Quota) {
	for i, o := range *p.all {
		if o.Name == c.Name {
			if c.Remaining < o.Remaining || (c.Remaining == o.Remaining && c.Reset > o.Reset) {
				(*p.all)[i] = c
			}
			return
		}
	}
	*p.all = append(*p.all, c)
}

// parseSplit reads a quota given in separate fields: remaining, and the
// fields named reset, limit and resource (when not ""). Remaining is -1
// when it is not a count.
func parseSplit(h http.Header, remaining, reset, limit, resource string, now time.Time) Quota {
	rem, ok := parseCount(remaining)
	if !ok {
		return Quota{Remaining: -1}
	}
	c := Quota{Remaining: rem}
	c.Reset, c.ResetUnix = parseReset(firstOf(h[reset]), now)
	if n, ok := parseCount(firstOf(h[limit])); ok && n > 0 && n <= maxLimit {
		c.Limit = n
	}
	if resource != "" {
		c.Name = trimOWS(firstOf(h[resource]))
	}
	return c
}

// parseRateLimit reads the quotas of one RateLimit field value into best.
// With sep ';' (the structured form) members are separated by ';' and list
// items, one quota each, by ','; with sep ',' (the older `limit=100,
// remaining=0, reset=30`) the value is one quota of ','-separated members.
// A member is key=value, or, first in its item, the quota's name; a quoted
// name may hold any separator. Values are up to 18 digits, optionally
// quoted and surrounded by white space; a member otherwise malformed is
// skipped, not its item.
func parseRateLimit(v string, sep byte, best *pick) {
	n := len(v)
	c, first := Quota{Remaining: -1}, true
	for i := 0; i < n; {
		for i < n && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
		ks := i
		if i < n && v[i] == '"' {
			if j := strings.IndexByte(v[i+1:], '"'); j >= 0 {
				i += j + 2
			} else {
				i = n
			}
		}
		for i < n && v[i] != '=' && v[i] != sep && v[i] != ',' {
			i++
		}
		key := trimOWS(v[ks:i])
		if i < n && v[i] == '=' {
			vs := i + 1
			for i = vs; i < n && v[i] != sep && v[i] != ','; i++ {
			}
			if num, ok := parseMember(v[vs:i]); ok {
				c.apply(key, num)
			}
		} else if first {
			c.Name = unquote(key)
		}
		first = false
		end := i >= n || (sep == ';' && v[i] == ',')
		i++
		if end {
			best.consider(c)
			c, first = Quota{Remaining: -1}, true
		}
	}
}

// parseMember reads the value of a RateLimit member: up to 18 digits, with
// white space and quotes around them.
func parseMember(s string) (int64, bool) {
	return decimal(strings.Trim(s, " \t\""))
}

// apply sets the member key=n of a RateLimit item.
func (c *Quota) apply(key string, n int64) {
	switch {
	case isKey(key, "r") || isKey(key, "remaining"):
		c.Remaining = n
	case isKey(key, "t") || isKey(key, "reset"):
		if d := seconds(n); d <= MaxPeriod {
			c.Reset = d
		}
	case isKey(key, "limit"):
		if n > 0 && n <= maxLimit {
			c.Limit = n
		}
	}
}

// parsePolicy reads the quota of RateLimit-Policy fields: the item named
// name when the quota has one; else, when the quota said its limit, an item
// of that limit (a policy of another limit belongs to another limiter whose
// fields the response also carries); else the tightest (the fewest
// requests a second). Items are `"name";q=100;w=60` or the earlier
// `100;w=60`.
func parsePolicy(values []string, name string, said int64) (limit int64, window time.Duration) {
	for _, v := range values {
		var itemName string
		var q int64
		var w time.Duration
		idx := 0
		for i := 0; i < len(v); idx++ {
			var m member
			m, i = scanMember(v, i, ';')
			n, valid := parseCount(m.val)
			switch {
			case !m.hasVal:
				if idx == 0 {
					if n, valid := parseCount(m.key); valid {
						q = n // the earlier draft: the quota itself comes first
					} else {
						itemName = unquote(m.key)
					}
				}
			case !valid || n <= 0:
			case isKey(m.key, "q"):
				q = n
			case isKey(m.key, "w"):
				w = seconds(n)
			}
			if !m.itemEnd {
				continue
			}
			if q > 0 && w > 0 && q <= maxLimit && w <= MaxPeriod {
				switch {
				case name != "" || said > 0:
					if (name != "" && itemName == name) || (name == "" && q == said) {
						return q, w
					}
				case limit == 0 || float64(q)/w.Seconds() < float64(limit)/window.Seconds():
					limit, window = q, w
				}
			}
			itemName, q, w, idx = "", 0, 0, -1
		}
	}
	return limit, window
}

// member is one member of a RateLimit-Policy field: a key, with a value
// when it has one ("q=5"), or a bare name or number.
type member struct {
	key, val string
	hasVal   bool
	itemEnd  bool // the member ends its list item
}

// scanMember reads the member of v at i, members being separated by sep
// and list items by ',' (outside a quoted name, which may escape a quote
// with a backslash), and returns it with the index after it.
func scanMember(v string, i int, sep byte) (m member, next int) {
	n := len(v)
	for i < n && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	start := i
	if i < n && v[i] == '"' {
		i++
		for i < n && v[i] != '"' {
			if v[i] == '\\' {
				i++
			}
			i++
		}
	}
	for i < n && v[i] != '=' && v[i] != sep && v[i] != ',' {
		i++
	}
	m.key = trimOWS(v[start:min(i, n)])
	if i < n && v[i] == '=' {
		i++
		start = i
		for i < n && v[i] != sep && v[i] != ',' {
			i++
		}
		m.val, m.hasVal = trimOWS(v[start:i]), true
	}
	m.itemEnd = i >= n || (sep == ';' && v[i] == ',')
	return m, i + 1
}

// parseReset reads a reset: decimal seconds until it, or a Unix time when
// 10^8 or more (unix is then set when it is in whole seconds). A reset
// beyond MaxPeriod, or malformed, is 0: not said.
func parseReset(v string, now time.Time) (d time.Duration, unix bool) {
	whole, frac, _ := strings.Cut(trimOWS(v), ".")
	n, ok := parseCount(whole)
	if !ok {
		return 0, false
	}
	var f time.Duration
	scale := time.Second
	for i := 0; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		scale /= 10
		f += time.Duration(c-'0') * scale
	}
	if n >= 1e8 { // a Unix time, as some services send: no quota window lasts three years
		if n > 1e12 {
			return 0, false
		}
		d, unix = max(time.Duration(n)*time.Second+f-time.Duration(now.UnixNano()), 0), frac == ""
	} else {
		d = time.Duration(n)*time.Second + f
	}
	if d > MaxPeriod {
		return 0, false
	}
	return d, unix
}

// parseCount reads a non-negative decimal integer of at most 18 digits,
// optionally quoted and surrounded by white space.
func parseCount(s string) (int64, bool) {
	return decimal(unquote(trimOWS(s)))
}

// decimal reads s, 1 to 18 ASCII digits and nothing else.
func decimal(s string) (int64, bool) {
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
	if n > int64(MaxPeriod/time.Second) {
		return MaxPeriod + time.Second // beyond any bound, without overflow
	}
	return time.Duration(n) * time.Second
}

// isKey reports whether key is want, ignoring ASCII case; want is lower case.
func isKey(key, want string) bool {
	if len(key) != len(want) {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i]|0x20 != want[i] {
			return false
		}
	}
	return true
}

// trimOWS trims optional white space (spaces and tabs) from both ends.
func trimOWS(s string) string {
	return strings.Trim(s, " \t")
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

func firstOf(v []string) string {
	if len(v) > 0 {
		return v[0]
	}
	return ""
}

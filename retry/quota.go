package retry

import (
	"net/http"
	"strings"
	"sync/atomic"
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
// `X-RateLimit-Resource`. A RateLimit-Policy is read beside the draft's
// own fields (`RateLimit`, `RateLimit-Remaining`), not beside X-RateLimit
// fields alone. When several quotas are given the tightest one
// counts: the fewest requests remaining, then the latest reset. Malformed
// fields, and resets or windows beyond [MaxQuotaPeriod], are ignored; ok is
// false when nothing usable was found. It allocates nothing.
func ParseQuota(h http.Header, now time.Time) (q Quota, ok bool) {
	f, found := lookupQuota(h)
	if !found {
		return Quota{Remaining: -1}, false
	}
	var best quotaPick
	if parseQuota(&f, now, nil, &best); !best.ok {
		return Quota{Remaining: -1}, false
	}
	return best.q, true
}

// pickSplit considers the quota given in separate fields: remaining, and
// the fields named reset and limit, and reports whether it won. The limit
// is left to limitQuota, for a quota that wins; a name is the caller's to
// set.
func (p *quotaPick) pickSplit(h http.Header, remaining, reset, limit string, now time.Time) bool {
	rem, found := parseCount(remaining)
	if !found {
		return false
	}
	d, unix := parseReset(firstOf(h[reset]), now)
	if !p.wins(rem, d) {
		return false
	}
	p.q, p.ok, p.resource, p.limit, p.unix = Quota{Remaining: rem, Reset: d, ResetUnix: unix != 0}, true, false, limit, unix
	return true
}

// limitQuota reads the limit of a quota of separate fields, from the field
// pickSplit named (best.limit set).
func limitQuota(f *quotaFields, best *quotaPick) {
	if n, ok := parseCount(firstOf(f.h[best.limit])); ok && n > 0 && n <= maxQuotaLimit {
		best.q.Limit = n
	}
	best.limit = ""
}

// quotaFields are the fields that say a response carries a quota, looked
// up once; the rest are looked up only when these are there.
type quotaFields struct {
	h                                http.Header
	rateLimit, remaining, xRemaining []string
}

func lookupQuota(h http.Header) (f quotaFields, found bool) {
	f = quotaFields{h, h["Ratelimit"], h["Ratelimit-Remaining"], h["X-Ratelimit-Remaining"]}
	return f, f.rateLimit != nil || f.remaining != nil || f.xRemaining != nil
}

// ietf reports whether a field of the IETF draft's forms came, beside
// which its RateLimit-Policy is read: X-RateLimit fields alone do not read
// one (ADR 0211).
func (f *quotaFields) ietf() bool { return f.rateLimit != nil || f.remaining != nil }

func firstOf(v []string) string {
	if len(v) > 0 {
		return v[0]
	}
	return ""
}

// policyCache keeps the last RateLimit-Policy read: a server sends the same
// one on every response, so it is parsed once, not on every response.
type policyCache struct{ last atomic.Pointer[cachedPolicy] }

type cachedPolicy struct {
	value, name string
	said, limit int64
	window      time.Duration
}

func (c *policyCache) parse(values []string, name string, said int64) (int64, time.Duration) {
	if c == nil || len(values) != 1 {
		return parsePolicy(values, name, said)
	}
	if p := c.last.Load(); p != nil && p.value == values[0] && p.name == name && p.said == said {
		return p.limit, p.window
	}
	limit, window := parsePolicy(values, name, said)
	c.last.Store(&cachedPolicy{value: values[0], name: name, said: said, limit: limit, window: window})
	return limit, window
}

// windowCache keeps the limit of the last window of X-RateLimit fields
// whose limit the transport read, for a quota with a Unix-second reset: its
// host, route and reset second. The limit only tells the pacer whether a
// response opened its window (it left one of the limit); a later response
// of the same window that does not say the limit less one did not, and its
// own limit field is not read (ADR 0212).
type windowCache struct{ last atomic.Pointer[windowMark] }

type windowMark struct {
	host, route  string
	reset, limit int64 // reset: a Unix second
}

// settleLimit settles the limit of q, a quota of X-RateLimit fields alone
// that the transport's own pacer is told of: it is read only when it may
// tell that the response opened its window, which one without a reset did
// not, nor one of a known window that does not say its limit less one.
func (c *windowCache) settleLimit(f *quotaFields, q *quotaPick, host, route string, at *time.Time) {
	if q.q.Reset <= 0 {
		q.limit = ""
		return
	}
	if q.unix == 0 {
		return // a delay: no instant that names its window
	}
	if m := c.last.Load(); m != nil && m.reset == q.unix && q.q.Remaining+1 != m.limit && m.host == host && m.route == route {
		q.limit = ""
		return
	}
	if limitQuota(f, q); q.q.Limit > 0 {
		// One record a window at most, whatever the mix of hosts: the one
		// kept stays until its second passed.
		if m := c.last.Load(); m == nil || m.reset <= at.Unix() {
			c.last.Store(&windowMark{host: host, route: route, reset: q.unix, limit: q.q.Limit})
		}
	}
}

// parseQuota reads the quota of the fields f found into best, which is
// filled in place (ok set when a quota was found).
func parseQuota(f *quotaFields, now time.Time, policies *policyCache, best *quotaPick) {
	if pickQuota(f, now, best); best.ok {
		settleQuota(f, policies, best, true)
	}
}

// pickQuota reads the quota of the fields f found into best, but for what
// settleQuota reads: all that a response's event needs.
func pickQuota(f *quotaFields, now time.Time, best *quotaPick) {
	for _, v := range f.rateLimit {
		// The form of one structured quota every response of a limited API
		// carries (`"name"; r=37; t=4`) is read at once, any other by the
		// general parser.
		if !quickRateLimit(v, best) {
			slowRateLimit(v, best)
		}
	}
	if len(f.remaining) > 0 {
		best.pickSplit(f.h, f.remaining[0], "Ratelimit-Reset", "Ratelimit-Limit", now)
	}
	if len(f.xRemaining) > 0 && best.pickSplit(f.h, f.xRemaining[0], "X-Ratelimit-Reset", "X-Ratelimit-Limit", now) {
		best.resource = true
	}
}

// settleQuota reads what pickQuota left: the limit of a quota of separate
// fields, the quota's RateLimit-Policy (beside the draft's own fields only,
// ADR 0211) and, for a quota of X-RateLimit fields, its name
// (X-RateLimit-Resource), by which a policy's item is matched. The name is
// read when a policy needs it or named is set; nameQuota reads it later.
// The transport, which calls them on every response of a limited API,
// reads the name only for a pacer that takes note of the quota, and the
// limit of X-RateLimit fields alone only when it may tell the window's
// opener (windowCache.settleLimit).
func settleQuota(f *quotaFields, policies *policyCache, best *quotaPick, named bool) {
	if best.limit != "" {
		limitQuota(f, best)
	}
	var values []string
	if f.ietf() {
		values = f.h["Ratelimit-Policy"]
	}
	if best.resource && (named || len(values) > 0) {
		nameQuota(f, best)
	}
	if len(values) > 0 {
		if limit, window := policies.parse(values, best.q.Name, best.q.Limit); limit > 0 {
			best.q.Limit, best.q.Window = limit, window
		}
	}
}

// nameQuota sets the name of a quota of X-RateLimit fields (best.resource
// set).
func nameQuota(f *quotaFields, best *quotaPick) {
	best.q.Name, best.resource = trimOWS(firstOf(f.h["X-Ratelimit-Resource"])), false
}

type quotaPick struct {
	q        Quota
	ok       bool
	resource bool   // q is of X-RateLimit fields, named by nameQuota
	limit    string // the field of q's limit, not read yet (limitQuota)
	unix     int64  // the Unix second q resets at, when its field said one
}

// wins reports whether a quota with rem requests remaining until reset
// counts over the one picked: the fewest remaining, then the latest reset.
func (p *quotaPick) wins(rem int64, reset time.Duration) bool {
	return !p.ok || rem < p.q.Remaining || (rem == p.q.Remaining && reset > p.q.Reset)
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
		member := 0
		for i := 0; i < len(v); member++ {
			var m qmember
			m, i = scanMember(v, i, ';')
			n, valid := parseCount(m.val)
			switch {
			case !m.hasVal:
				if member == 0 {
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
			if q > 0 && w > 0 && q <= maxQuotaLimit && w <= MaxQuotaPeriod {
				switch {
				case name != "" || said > 0:
					if (name != "" && itemName == name) || (name == "" && q == said) {
						return q, w
					}
				case limit == 0 || float64(q)/w.Seconds() < float64(limit)/window.Seconds():
					limit, window = q, w
				}
			}
			itemName, q, w, member = "", 0, 0, -1
		}
	}
	return limit, window
}

// slowRateLimit reads the quotas of a RateLimit field value that
// quickRateLimit did not read.
func slowRateLimit(v string, best *quotaPick) {
	sep := byte(';')
	if strings.IndexByte(v, ';') < 0 {
		sep = ',' // the older `limit=100, remaining=0, reset=30`: one quota
	}
	parseRateLimit(v, sep, best)
}

// quickRateLimit reads v into best when it is one structured quota in the
// form servers send it: a quoted name, then `; key=digits` members, one
// space allowed after each semicolon. It returns false, having changed
// nothing, for anything else, which is then parseRateLimit's to read; on
// what it accepts the two agree.
func quickRateLimit(v string, best *quotaPick) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	j := strings.IndexByte(v[1:], '"')
	if j < 0 {
		return false
	}
	rem, reset, n := int64(-1), time.Duration(0), len(v)
	for i := j + 2; i < n; {
		if v[i] != ';' {
			return false
		}
		if i++; i < n && v[i] == ' ' {
			i++
		}
		// A key of one byte that ends nothing, '=', and digits.
		if i+2 >= n || rlClass[v[i]] != 0 || v[i+1] != '=' {
			return false
		}
		key := v[i] | 0x20
		i += 2
		ds, num := i, int64(0)
		for ; i < n && v[i]-'0' <= 9; i++ {
			num = num*10 + int64(v[i]-'0')
		}
		if i == ds || i-ds > 18 {
			return false
		}
		switch key {
		case 'r':
			rem = num
		case 't':
			if num <= int64(MaxQuotaPeriod/time.Second) {
				reset = time.Duration(num) * time.Second
			}
		}
	}
	if rem >= 0 && best.wins(rem, reset) {
		best.q, best.ok, best.resource, best.limit = Quota{Remaining: rem, Reset: reset, Name: v[1 : 1+j]}, true, false, ""
	}
	return true
}

// Byte classes of the RateLimit parser: one table load tells what a byte
// may end.
const (
	rlOWS   = 1 << iota // space or tab
	rlQuote             // '"'
	rlEq                // '=': ends a member's key
	rlComma             // ',': ends a member, and a list item of the structured form
	rlSemi              // ';': ends a member of the structured form
)

var rlClass = [256]uint8{' ': rlOWS, '\t': rlOWS, '"': rlQuote, '=': rlEq, ',': rlComma, ';': rlSemi}

// parseRateLimit reads the quotas of one RateLimit field value into best.
// With sep ';' (the structured form) members are separated by ';' and list
// items, one quota each, by ','; with sep ',' (the older `limit=100,
// remaining=0, reset=30`) the value is one quota of ','-separated members.
// A member is key=value, or, first in its item, the quota's name; a quoted
// name may hold any separator. Values are up to 18 digits, optionally
// quoted and surrounded by white space; a member otherwise malformed is
// skipped, not its item.
//
// It reads each byte once, keeps its item in locals and allocates nothing:
// a limited API's every response comes here when quickRateLimit does not
// take it. refParseRateLimit, the plainer parser it replaced, is kept with
// the tests, which check that both agree on every input.
func parseRateLimit(v string, sep byte, best *quotaPick) {
	keyEnd, valEnd, itemEnd := uint8(rlEq|rlComma), uint8(rlComma), uint8(0)
	if sep == ';' {
		keyEnd, valEnd, itemEnd = rlEq|rlComma|rlSemi, rlComma|rlSemi, rlComma
	}
	n := len(v)
	rem, reset, limit, name, first := int64(-1), time.Duration(0), int64(0), "", true
	for i := 0; i < n; {
		for i < n && rlClass[v[i]]&rlOWS != 0 {
			i++
		}
		ks := i
		if i < n && v[i] == '"' { // a quoted name may hold any separator
			if j := strings.IndexByte(v[i+1:], '"'); j >= 0 {
				i += j + 2
			} else {
				i = n
			}
		}
		for i < n && rlClass[v[i]]&keyEnd == 0 {
			i++
		}
		ke := i
		for ke > ks && rlClass[v[ke-1]]&rlOWS != 0 {
			ke--
		}
		if i < n && v[i] == '=' {
			for i++; i < n && rlClass[v[i]]&(rlOWS|rlQuote) != 0; i++ {
			}
			ds, num := i, int64(0)
			for ; i < n && v[i]-'0' <= 9; i++ {
				if i-ds < 18 {
					num = num*10 + int64(v[i]-'0')
				}
			}
			valid := i > ds && i-ds <= 18
			for ; i < n && rlClass[v[i]]&valEnd == 0; i++ {
				if rlClass[v[i]]&(rlOWS|rlQuote) == 0 {
					valid = false
				}
			}
			if valid {
				switch k := v[ks:ke]; len(k) {
				case 1:
					switch k[0] | 0x20 {
					case 'r':
						rem = num
					case 't':
						if num <= int64(MaxQuotaPeriod/time.Second) {
							reset = time.Duration(num) * time.Second
						}
					}
				case 5:
					if isKey(k, "reset") {
						if num <= int64(MaxQuotaPeriod/time.Second) {
							reset = time.Duration(num) * time.Second
						}
					} else if isKey(k, "limit") && num > 0 && num <= maxQuotaLimit {
						limit = num
					}
				case 9:
					if isKey(k, "remaining") {
						rem = num
					}
				}
			}
		} else if first {
			name = unquote(v[ks:ke])
		}
		first = false
		last := i >= n || rlClass[v[i]]&itemEnd != 0
		i++
		if last {
			if rem >= 0 && best.wins(rem, reset) {
				best.q, best.ok, best.resource, best.limit = Quota{Remaining: rem, Reset: reset, Limit: limit, Name: name}, true, false, ""
			}
			rem, reset, limit, name, first = -1, 0, 0, "", true
		}
	}
}

// qmember is one member of a RateLimit or RateLimit-Policy field: a key,
// with a value when it has one ("r=5"), or a bare name or number.
type qmember struct {
	key, val string
	hasVal   bool
	itemEnd  bool // the member ends its list item
}

// scanMember reads the member of v at i, members being separated by sep
// and list items by ',' (outside a quoted name), and returns it with the
// index after it. It allocates nothing and reads each byte once: it runs on
// every response.
func scanMember(v string, i int, sep byte) (m qmember, next int) {
	n := len(v)
	for i < n && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	start := i
	if i < n && v[i] == '"' { // a quoted name may hold any separator
		i++
		for i < n && v[i] != '"' {
			if v[i] == '\\' {
				i++
			}
			i++
		}
	}
	for i < n {
		if c := v[i]; c == '=' || c == sep || c == ',' {
			break
		}
		i++
	}
	m.key = trimOWS(v[start:min(i, n)])
	if i < n && v[i] == '=' {
		i++
		start = i
		for i < n {
			if c := v[i]; c == sep || c == ',' {
				break
			}
			i++
		}
		m.val, m.hasVal = trimOWS(v[start:i]), true
	}
	m.itemEnd = i >= n || (sep == ';' && v[i] == ',')
	return m, i + 1
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

func cutByte(s string, sep byte) (before, after string) {
	if i := strings.IndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// trimOWS trims optional white space (spaces and tabs) from both ends.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

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
	// The common field is bare digits, most often four (5000, 4987): four
	// are read as one word, others in one pass; only what is not bare
	// digits is trimmed and unquoted.
	if len(s) == 4 {
		if x, all := fourDigits(s); all {
			return int64(x), true
		}
	} else if n, ok := decimal(s); ok {
		return n, true
	}
	return decimal(unquote(trimOWS(s)))
}

// fourDigits reads b, four bytes, as one 32-bit word, as eightDigits reads
// eight: all is set when every byte is an ASCII digit.
func fourDigits(b string) (x uint32, all bool) {
	_ = b[3]
	x = uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	const hi, zeros, six = 0xf0f0f0f0, 0x30303030, 0x06060606
	if x&hi != zeros || (x+six)&hi != zeros {
		return 0, false
	}
	x -= zeros
	x = (x*10 + x>>8) & 0x00ff00ff
	return (x*100 + x>>16) & 0xffff, true
}

func seconds(n int64) time.Duration {
	if n > int64(MaxQuotaPeriod/time.Second) {
		return MaxQuotaPeriod + time.Second // beyond any bound, without overflow
	}
	return time.Duration(n) * time.Second
}

// parseReset reads a reset: decimal seconds until it, or a Unix time when
// 10^8 or more (unix is then that time when in whole seconds, else 0). A
// reset beyond MaxQuotaPeriod, or malformed, is 0: not said.
func parseReset(v string, now time.Time) (d time.Duration, unix int64) {
	// The common field is bare digits, most often the ten of a Unix time:
	// those are read eight at a time and settled at once, in a frame of
	// their own; the rest in one pass.
	if len(v) == 10 {
		if hi, all := eightDigits(v[:8]); all && v[8]-'0' <= 9 && v[9]-'0' <= 9 {
			if n := int64(hi)*100 + int64(v[8]-'0')*10 + int64(v[9]-'0'); n >= 1e8 { // below 10^10: within the bound of 10^12
				if d = max(time.Duration(n)*time.Second-time.Duration(now.UnixNano()), 0); d > MaxQuotaPeriod {
					return 0, 0
				}
				return d, n
			}
		}
	}
	return parseAnyReset(v, now)
}

// parseAnyReset is parseReset of any field but ten bare digits from 10^8
// on.
func parseAnyReset(v string, now time.Time) (d time.Duration, unix int64) {
	n, ok := decimal(v)
	var frac string
	if !ok {
		var whole string
		whole, frac, _ = strings.Cut(trimOWS(v), ".")
		if n, ok = parseCount(whole); !ok {
			return 0, 0
		}
	}
	var f time.Duration
	if frac != "" {
		scale := time.Second
		for i := 0; i < len(frac); i++ {
			c := frac[i]
			if c < '0' || c > '9' {
				return 0, 0
			}
			scale /= 10
			f += time.Duration(c-'0') * scale
		}
	}
	if n >= 1e8 { // a Unix time, as some services send: no quota window lasts three years
		if n > 1e12 {
			return 0, 0
		}
		if d = max(time.Duration(n)*time.Second+f-time.Duration(now.UnixNano()), 0); frac == "" {
			unix = n
		}
	} else {
		d = time.Duration(n)*time.Second + f
	}
	if d > MaxQuotaPeriod {
		return 0, 0
	}
	return d, unix
}

// eightDigits reads b, eight bytes, as one 64-bit word: all is set when
// every byte is an ASCII digit, and x is then their value.
func eightDigits(b string) (x uint64, all bool) {
	_ = b[7]
	x = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	// A digit, 0x30 to 0x39, has a high nibble of 3, still 3 with 6 added;
	// a byte of 0x30 to 0x3f carries nothing into the next one.
	const hi, zeros, six = 0xf0f0f0f0f0f0f0f0, 0x3030303030303030, 0x0606060606060606
	if x&hi != zeros || (x+six)&hi != zeros {
		return 0, false
	}
	// The first digit is the lowest byte: neighbouring bytes combine into
	// values of two digits, those into four, those into eight.
	x -= zeros
	x = (x*10 + x>>8) & 0x00ff00ff00ff00ff
	x = (x*100 + x>>16) & 0x0000ffff0000ffff
	x = (x*10000 + x>>32) & 0xffffffff
	return x, true
}

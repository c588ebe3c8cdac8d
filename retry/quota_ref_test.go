package retry

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// refParseRateLimit is the RateLimit parser parseRateLimit replaced, kept
// as the reference it must agree with on every input
// (FuzzRateLimitAgainstReference): clear rather than fast.
func refParseRateLimit(v string, sep byte, best *quotaPick) {
	n := len(v)
	c, first := Quota{Remaining: -1}, true
	for i := 0; i < n; {
		for i < n && (v[i] == ' ' || v[i] == '\t') {
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
		for i < n && v[i] != '=' && v[i] != sep && v[i] != ',' {
			i++
		}
		ke := min(i, n)
		for ke > ks && (v[ke-1] == ' ' || v[ke-1] == '\t') {
			ke--
		}
		if i < n && v[i] == '=' {
			i++
			for i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == '"') {
				i++
			}
			var num int64
			digits := 0
			for ; i < n && v[i] >= '0' && v[i] <= '9'; i++ {
				if digits < 18 {
					num = num*10 + int64(v[i]-'0')
				}
				digits++
			}
			valid := digits > 0 && digits <= 18
			for ; i < n && v[i] != sep && v[i] != ','; i++ {
				if b := v[i]; b != ' ' && b != '\t' && b != '"' {
					valid = false
				}
			}
			if valid {
				c.refApply(v[ks:ke], num)
			}
		} else if first {
			c.Name = unquote(v[ks:ke])
		}
		first = false
		end := i >= n || (sep == ';' && v[i] == ',')
		i++
		if end {
			best.refConsider(c)
			c, first = Quota{Remaining: -1}, true
		}
	}
}

// refApply sets the member key=n of a RateLimit item.
func (c *Quota) refApply(key string, n int64) {
	switch {
	case isKey(key, "r") || isKey(key, "remaining"):
		c.Remaining = n
	case isKey(key, "t") || isKey(key, "reset"):
		if d := seconds(n); d <= MaxQuotaPeriod {
			c.Reset = d
		}
	case isKey(key, "limit"):
		if n > 0 && n <= maxQuotaLimit {
			c.Limit = n
		}
	}
}

// parseRateLimit must read every RateLimit value as refParseRateLimit does,
// in both of its forms, whatever the bytes.
func FuzzRateLimitAgainstReference(f *testing.F) {
	for _, s := range []string{
		`"50-in-5sec"; r=37; t=4`, `"default";r=0;t=30`, `"burst";r=5;t=1, "day";r=0;t=3600`,
		"limit=100, remaining=7, reset=12", `r=0;t=2`, `"x";r=-1;t=zz`, `"x";r=0;t=2147483647`,
		`"a,b;c=d"; r="5"; t= 7 `, `R=1;T=86400, REMAINING=2;RESET=86401;LIMIT=1073741825`,
		`r=0000000000000000001;t=000000000000000001`, `"unterminated; r=1`, `r=1;`, `r=1,`, `;;,,==`,
		"\tr\t=\t3\t;\tt=\"9\"x", `first, r=1`, `"q"x; r=2`,
		`"n"`, `"n";`, `"n"; r=5 ;`, `"n";;=5`, `"n"; R=1; T=86401`, `"n"; r=1234567890123456789`, `"n"; x=1; r=2`, `"n";r=1,"m";r=0`,
		`"n"; r=5"`, `"n"=5; r=1`, `"a\"b"; r=1`, `"n"	;	r=3	`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		// As parseQuota reads a field: the plainest structured form at
		// once, any other by the general parser.
		var got, want quotaPick
		pickQuota(&quotaFields{rateLimit: []string{v}}, time.Time{}, &got)
		sep := byte(';')
		if strings.IndexByte(v, ';') < 0 {
			sep = ','
		}
		refParseRateLimit(v, sep, &want)
		if got != want {
			t.Fatalf("pickQuota(RateLimit: %q) = %+v; the reference reads %+v", v, got, want)
		}
		for _, sep := range []byte{';', ','} {
			var got, want quotaPick
			parseRateLimit(v, sep, &got)
			refParseRateLimit(v, sep, &want)
			if got != want {
				t.Fatalf("parseRateLimit(%q, %q) = %+v; the reference reads %+v", v, sep, got, want)
			}
			// Appended to a quota already read, as the fields of stacked
			// limiters are.
			got = quotaPick{q: Quota{Remaining: 3, Reset: 5 * time.Second, Name: "before"}, ok: true}
			want = got
			parseRateLimit(v, sep, &got)
			refParseRateLimit(v, sep, &want)
			if got != want {
				t.Fatalf("after a quota, parseRateLimit(%q, %q) = %+v; the reference reads %+v", v, sep, got, want)
			}
		}
	})
}

// refParseSplitFields, as refParseQuota, reads a quota given in separate fields: remaining, and
// the fields named reset, limit and resource (when not "").
func refParseSplitFields(h http.Header, remaining, reset, limit, resource string, now time.Time) Quota {
	rem, found := parseCount(remaining)
	if !found {
		return Quota{Remaining: -1}
	}
	c := Quota{Remaining: rem}
	c.Reset, c.ResetUnix = refParseReset(firstOf(h[reset]), now)
	if n, ok := parseCount(firstOf(h[limit])); ok && n > 0 && n <= maxQuotaLimit {
		c.Limit = n
	}
	if resource != "" {
		c.Name = trimOWS(firstOf(h[resource]))
	}
	return c
}

// refParseQuota is ParseQuota as it was before its fields were read in
// stages, kept as the reference the tests hold it to: clear rather than
// fast.
func refParseQuota(h http.Header, now time.Time) (q Quota, ok bool) {
	f, found := lookupQuota(h)
	if !found {
		return Quota{Remaining: -1}, false
	}
	var policies *policyCache // none: every policy parsed
	var best quotaPick
	for _, v := range f.rateLimit {
		sep := byte(';')
		if strings.IndexByte(v, ';') < 0 {
			sep = ',' // the older `limit=100, remaining=0, reset=30`: one quota
		}
		refParseRateLimit(v, sep, &best)
	}
	if len(f.remaining) > 0 {
		best.refConsider(refParseSplitFields(h, f.remaining[0], "Ratelimit-Reset", "Ratelimit-Limit", "", now))
	}
	if len(f.xRemaining) > 0 {
		best.refConsider(refParseSplitFields(h, f.xRemaining[0], "X-Ratelimit-Reset", "X-Ratelimit-Limit", "X-Ratelimit-Resource", now))
	}
	if !best.ok {
		return Quota{Remaining: -1}, false
	}
	// A policy only beside the draft's own fields (ADR 0211).
	if values := h["Ratelimit-Policy"]; len(values) > 0 && (f.rateLimit != nil || f.remaining != nil) {
		if limit, window := policies.parse(values, best.q.Name, best.q.Limit); limit > 0 {
			best.q.Limit, best.q.Window = limit, window
		}
	}
	return best.q, true
}

// refParseReset, as refParseQuota, reads a reset: decimal seconds until it, or a Unix time when
// 10^8 or more (unix is then set). A reset beyond MaxQuotaPeriod, or
// malformed, is 0: not said.
func refParseReset(v string, now time.Time) (d time.Duration, unix bool) {
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
		d, unix = max(time.Duration(n)*time.Second+f-time.Duration(now.UnixNano()), 0), frac == ""
	} else {
		d = time.Duration(n)*time.Second + f
	}
	if d > MaxQuotaPeriod {
		return 0, false
	}
	return d, unix
}

// ParseQuota must read every header as refParseQuota does, and the
// transport's reading in stages (pickQuota, settleQuota, nameQuota) must
// give the pacer the same quota, and its events the same remaining count
// and reset, whatever the fields say.
func FuzzQuotaAgainstReference(f *testing.F) {
	f.Add(`"50-in-5sec"; r=37; t=4`, `"50-in-5sec"; q=50; w=5; pk=:YWJj:`, "", "", "", "", "")
	f.Add("", "", "4987", "1800000060", "5000", "core", "")
	f.Add("limit=25, remaining=15, reset=3", "25;w=3", "0", "1800000001", "10", "", "")
	f.Add(`"a";r=0;t=1`, `"b";q=1000;w=3600, "core";q=10;w=1`, "0", " 1.5 ", `"10"`, " core ", "7")
	f.Add("", "50;w=5", "", "", "", "", "0")
	f.Fuzz(func(t *testing.T, rl, policy, rem, reset, limit, resource, splitRem string) {
		h := http.Header{}
		for k, v := range map[string]string{"Ratelimit": rl, "Ratelimit-Policy": policy, "X-Ratelimit-Remaining": rem,
			"X-Ratelimit-Reset": reset, "X-Ratelimit-Limit": limit, "X-Ratelimit-Resource": resource,
			"Ratelimit-Remaining": splitRem, "Ratelimit-Reset": reset, "Ratelimit-Limit": limit} {
			if v != "" {
				h[k] = []string{v}
			}
		}
		now := time.Unix(1_800_000_000, 0)
		got, ok := ParseQuota(h, now)
		want, wantOK := refParseQuota(h, now)
		if got != want || ok != wantOK {
			t.Fatalf("ParseQuota(%v) = %+v, %v; the reference reads %+v, %v", h, got, ok, want, wantOK)
		}
		fields, found := lookupQuota(h)
		if !found {
			return
		}
		var p policyCache
		for _, named := range []bool{false, true} {
			var staged quotaPick
			pickQuota(&fields, now, &staged)
			if staged.ok != wantOK || (wantOK && (staged.q.Remaining != want.Remaining || staged.q.Reset != want.Reset)) {
				t.Fatalf("pickQuota(%v) = %+v; the reference reads %+v, %v", h, staged, want, wantOK)
			}
			if !staged.ok {
				continue
			}
			settleQuota(&fields, &p, &staged, named)
			if staged.resource { // as the transport names a quota its pacer notes
				nameQuota(&fields, &staged)
			}
			if staged.q != want {
				t.Fatalf("in stages (named %v), %v reads %+v; the reference reads %+v", named, h, staged.q, want)
			}
		}
	})
}

// eightDigits must read eight bytes as the plain digit loop does.
func FuzzEightDigits(f *testing.F) {
	for _, s := range []string{"00000000", "18000000", "99999999", "1234567/", "1234567:", "\xb0\xb0\xb0\xb0\xb0\xb0\xb0\xb0", "?1234567", "12 45678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) < 8 {
			return
		}
		s = s[:8]
		want, wantAll := uint64(0), true
		for i := 0; i < 8; i++ {
			if c := s[i]; c < '0' || c > '9' {
				want, wantAll = 0, false
				break
			} else {
				want = want*10 + uint64(c-'0')
			}
		}
		if got, all := eightDigits(s); got != want || all != wantAll {
			t.Fatalf("eightDigits(%q) = %d, %v; want %d, %v", s, got, all, want, wantAll)
		}
	})
}

// fourDigits must read four bytes as the plain digit loop does, and
// parseCount, which uses it, as before it did.
func FuzzFourDigits(f *testing.F) {
	for _, s := range []string{"5000", "4987", "00000", "123456", "9999999", "99999999", "123/", "12:4", "\xb0\xb0\xb0\xb0", " 123", "12 4", "1234567/", `"1234"`, "0000000000000000001", "12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) == 4 {
			want, wantAll := uint64(0), true
			for i := 0; i < len(s); i++ {
				if c := s[i]; c < '0' || c > '9' {
					want, wantAll = 0, false
					break
				} else {
					want = want*10 + uint64(c-'0')
				}
			}
			if got, all := fourDigits(s); uint64(got) != want || all != wantAll {
				t.Fatalf("fourDigits(%q) = %d, %v; want %d, %v", s, got, all, want, wantAll)
			}
		}
		want, wantOK := decimal(s)
		if !wantOK {
			want, wantOK = decimal(unquote(trimOWS(s)))
		}
		if got, ok := parseCount(s); got != want || ok != wantOK {
			t.Fatalf("parseCount(%q) = %d, %v; the digit loop reads %d, %v", s, got, ok, want, wantOK)
		}
	})
}

// refConsider is how the reference picks the quota that counts: the fewest
// requests remaining, then the latest reset.
func (p *quotaPick) refConsider(c Quota) {
	if c.Remaining < 0 {
		return
	}
	if !p.ok || c.Remaining < p.q.Remaining || (c.Remaining == p.q.Remaining && c.Reset > p.q.Reset) {
		p.q, p.ok = c, true
	}
}

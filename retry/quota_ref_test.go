package retry

import (
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
			best.consider(c)
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
		readRateLimit(v, &got)
		sep := byte(';')
		if strings.IndexByte(v, ';') < 0 {
			sep = ','
		}
		refParseRateLimit(v, sep, &want)
		if got != want {
			t.Fatalf("readRateLimit(%q) = %+v; the reference reads %+v", v, got, want)
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

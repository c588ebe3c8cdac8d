package retry_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady/retry"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	future := now.Add(90 * time.Second)
	cases := []struct {
		name  string
		value string
		want  time.Duration
		ok    bool
	}{
		{"integer", "120", 120 * time.Second, true},
		{"decimal", "42.5", 42500 * time.Millisecond, true},
		{"surrounding space", "  30 ", 30 * time.Second, true},
		{"negative means zero", "-10", 0, true},
		{"zero", "0", 0, true},
		{"plus sign", "+5", 5 * time.Second, true},
		{"inf", "inf", 0, false},
		{"nan", "nan", 0, false},
		{"exponent overflow", "1e400", 0, false},
		{"exponent", "1e3", 0, false},
		{"hex", "0x10", 0, false},
		{"empty", "", 0, false},
		{"blank", "   ", 0, false},
		{"word", "soon", 0, false},
		{"trailing point", "5.", 0, false},
		{"leading point", ".5", 0, false},
		{"huge saturates", "99999999999999999999999", time.Duration(math.MaxInt64), true},
		{"IMF-fixdate", future.Format(http.TimeFormat), 90 * time.Second, true},
		{"RFC 850", future.Format(time.RFC850), 90 * time.Second, true},
		{"asctime", future.Format(time.ANSIC), 90 * time.Second, true},
		{"date in the past", now.Add(-time.Hour).Format(http.TimeFormat), 0, false},
		{"date now", now.Format(http.TimeFormat), 0, false},
		{"far future date", "Fri, 31 Dec 9999 23:59:59 GMT", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Sub(now), true},
		{"broken date", "Fri, 32 Foo 2026 25:00:00 GMT", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := retry.ParseRetryAfter(c.value, now)
			if got != c.want || ok != c.ok {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", c.value, got, ok, c.want, c.ok)
			}
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "42.5", " 30 ", "-10", "0", "inf", "nan", "1e400", "", "soon",
		"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := retry.ParseRetryAfter(v, now)
		if d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v: negative", v, d)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v without a hint", v, d)
		}
	})
}

func TestParseQuota(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	cases := []struct {
		name   string
		header http.Header
		want   retry.Quota
		ok     bool
	}{
		{"structured", http.Header{"Ratelimit": {`"default";r=0;t=30`}}, retry.Quota{Remaining: 0, Reset: 30 * time.Second, Name: "default"}, true},
		{"structured several, tightest wins", http.Header{"Ratelimit": {`"burst";r=5;t=1, "day";r=0;t=3600`}}, retry.Quota{Remaining: 0, Reset: time.Hour, Name: "day"}, true},
		{"structured with spaces, as express-rate-limit sends", http.Header{"Ratelimit": {`"50-in-5sec"; r=0; t=4`}, "Ratelimit-Policy": {`"50-in-5sec"; q=50; w=5; pk=:YWJj:`}},
			retry.Quota{Remaining: 0, Reset: 4 * time.Second, Limit: 50, Window: 5 * time.Second, Name: "50-in-5sec"}, true},
		{"two stacked limiters, appended", http.Header{"Ratelimit": {`"a"; r=3; t=1`, `"b"; r=0; t=9`}, "Ratelimit-Policy": {`"a"; q=10; w=1`, `"b"; q=30; w=10`}},
			retry.Quota{Remaining: 0, Reset: 9 * time.Second, Limit: 30, Window: 10 * time.Second, Name: "b"}, true},
		{"draft-6 with its policy", http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"3"}, "Ratelimit-Limit": {"50"}, "Ratelimit-Policy": {"50;w=5"}},
			retry.Quota{Remaining: 0, Reset: 3 * time.Second, Limit: 50, Window: 5 * time.Second}, true},
		{"draft-7 with its policy", http.Header{"Ratelimit": {"limit=50, remaining=0, reset=3"}, "Ratelimit-Policy": {"50;w=5"}},
			retry.Quota{Remaining: 0, Reset: 3 * time.Second, Limit: 50, Window: 5 * time.Second}, true},
		{"github resource", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1800000010"}, "X-Ratelimit-Resource": {"search"}},
			retry.Quota{Remaining: 0, Reset: 10 * time.Second, Name: "search", ResetUnix: true}, true},
		{"decimal reset", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1.25"}}, retry.Quota{Remaining: 0, Reset: 1250 * time.Millisecond}, true},
		{"reset beyond a day not believed", http.Header{"Ratelimit": {`"x";r=0;t=2147483647`}}, retry.Quota{Remaining: 0, Name: "x"}, true},
		{"window beyond a day not believed", http.Header{"Ratelimit": {`"default";r=0;t=2`}, "Ratelimit-Policy": {`"default";q=1;w=2147483647`}},
			retry.Quota{Remaining: 0, Reset: 2 * time.Second, Name: "default"}, true},
		{"huge limit not believed", http.Header{"Ratelimit": {`r=0;t=2`}, "Ratelimit-Policy": {`q=99999999999;w=1`}}, retry.Quota{Remaining: 0, Reset: 2 * time.Second}, true},
		{"overlong digits", http.Header{"X-Ratelimit-Remaining": {"0000000000000000000001"}}, retry.Quota{Remaining: -1}, false},
		{"older combined form", http.Header{"Ratelimit": {"limit=100, remaining=7, reset=12"}}, retry.Quota{Remaining: 7, Reset: 12 * time.Second, Limit: 100}, true},
		{"older separate fields", http.Header{"Ratelimit-Remaining": {"3"}, "Ratelimit-Reset": {"9"}}, retry.Quota{Remaining: 3, Reset: 9 * time.Second}, true},
		{"x-ratelimit delta", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"15"}}, retry.Quota{Remaining: 0, Reset: 15 * time.Second}, true},
		{"x-ratelimit epoch", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1800000060"}}, retry.Quota{Remaining: 0, Reset: time.Minute, ResetUnix: true}, true},
		{"x-ratelimit with its limit", http.Header{"X-Ratelimit-Remaining": {"19"}, "X-Ratelimit-Reset": {"1800000002"}, "X-Ratelimit-Limit": {"20"}},
			retry.Quota{Remaining: 19, Reset: 2 * time.Second, Limit: 20, ResetUnix: true}, true},
		{"malformed remaining ignored", http.Header{"X-Ratelimit-Remaining": {"lots"}}, retry.Quota{Remaining: -1, Reset: 0}, false},
		{"malformed structured ignored", http.Header{"Ratelimit": {`"x";r=-1;t=zz`}}, retry.Quota{Remaining: -1, Reset: 0}, false},
		{"garbage reset ignored", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"NaN"}}, retry.Quota{Remaining: 0, Reset: 0}, true},
		{"nothing", http.Header{}, retry.Quota{Remaining: -1, Reset: 0}, false},
		{"with its policy", http.Header{"Ratelimit": {`"default";r=0;t=30`}, "Ratelimit-Policy": {`"default";q=100;w=60`}},
			retry.Quota{Remaining: 0, Reset: 30 * time.Second, Limit: 100, Window: time.Minute, Name: "default"}, true},
		{"the policy of the same name", http.Header{"Ratelimit": {`"a";r=0;t=1`}, "Ratelimit-Policy": {`"b";q=1000;w=3600, "a";q=10;w=1`}},
			retry.Quota{Remaining: 0, Reset: time.Second, Limit: 10, Window: time.Second, Name: "a"}, true},
		{"tightest policy of an unnamed quota", http.Header{"Ratelimit": {`r=0;t=1`}, "Ratelimit-Policy": {`"a";q=10;w=1, "b";q=1000;w=3600`}},
			retry.Quota{Remaining: 0, Reset: time.Second, Limit: 1000, Window: time.Hour}, true},
		{"a policy of another limit belongs to another limiter", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Reset": {"1800000001"},
			"Ratelimit": {"limit=25, remaining=15, reset=3"}, "Ratelimit-Policy": {"25;w=3"}},
			retry.Quota{Remaining: 0, Reset: time.Second, Limit: 10, ResetUnix: true}, true},
		// ADR 0211: a policy is read beside the draft's own fields, not
		// beside X-RateLimit fields alone, which no limiter sends with one.
		{"X-RateLimit fields alone read no policy", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Reset": {"1800000001"},
			"Ratelimit-Policy": {"10;w=1"}},
			retry.Quota{Remaining: 0, Reset: time.Second, Limit: 10, ResetUnix: true}, true},
		{"X-RateLimit fields beside RateLimit-Remaining read the policy", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Reset": {"1800000001"},
			"Ratelimit-Remaining": {"5"}, "Ratelimit-Reset": {"3"}, "Ratelimit-Policy": {"10;w=1"}},
			retry.Quota{Remaining: 0, Reset: time.Second, Limit: 10, Window: time.Second, ResetUnix: true}, true},
		{"X-RateLimit fields beside RateLimit read the policy", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Reset": {"1800000001"},
			"Ratelimit": {`"other";r=5;t=3`}, "Ratelimit-Policy": {`"other";q=50;w=5, 10;w=1`}},
			retry.Quota{Remaining: 0, Reset: time.Second, Limit: 10, Window: time.Second, ResetUnix: true}, true},
		{"no policy of that name", http.Header{"Ratelimit": {`"a";r=0;t=1`}, "Ratelimit-Policy": {`"b";q=10;w=1`}},
			retry.Quota{Remaining: 0, Reset: time.Second, Name: "a"}, true},
		{"malformed policy ignored", http.Header{"Ratelimit": {`"a";r=0;t=1`}, "Ratelimit-Policy": {`"a";q=x;w=-1`}},
			retry.Quota{Remaining: 0, Reset: time.Second, Name: "a"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := retry.ParseQuota(c.header, now)
			if got != c.want || ok != c.ok {
				t.Errorf("ParseQuota = %+v, %v; want %+v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// ParseQuota runs on every response of a paced transport with a reporter:
// it allocates nothing, whatever the fields say.
func TestParseQuotaAllocatesNothing(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	headers := []http.Header{
		{"Ratelimit": {`"50-in-5sec"; r=7; t=4`}, "Ratelimit-Policy": {`"50-in-5sec"; q=50; w=5; pk=:YWJj:`}},
		{"Ratelimit": {"limit=50, remaining=7, reset=3"}, "Ratelimit-Policy": {"50;w=5"}},
		{"Ratelimit-Remaining": {"7"}, "Ratelimit-Reset": {"3"}, "Ratelimit-Limit": {"50"}, "Ratelimit-Policy": {"50;w=5"}},
		{"X-Ratelimit-Remaining": {"7"}, "X-Ratelimit-Reset": {"1800000010"}, "X-Ratelimit-Resource": {"core"}},
		{"X-Ratelimit-Remaining": {"lots"}, "X-Ratelimit-Reset": {"NaN"}, "Ratelimit": {`"x";r=-1;t=zz`}},
	}
	for _, h := range headers {
		if n := testing.AllocsPerRun(100, func() { retry.ParseQuota(h, now) }); n != 0 {
			t.Errorf("ParseQuota(%v) allocates %v times", h, n)
		}
	}
}

func FuzzParseQuota(f *testing.F) {
	f.Add(`"default";r=0;t=30`, "0", "15")
	f.Add("limit=100, remaining=7, reset=12", "x", "1800000060")
	f.Fuzz(func(t *testing.T, rl, rem, reset string) {
		h := http.Header{"Ratelimit": {rl}, "X-Ratelimit-Remaining": {rem}, "X-Ratelimit-Reset": {reset}, "Ratelimit-Policy": {rl}}
		q, ok := retry.ParseQuota(h, time.Unix(1_800_000_000, 0))
		if ok && (q.Remaining < 0 || q.Reset < 0 || q.Reset > retry.MaxQuotaPeriod || q.Window < 0 ||
			q.Window > retry.MaxQuotaPeriod || q.Limit < 0 || (q.Window > 0 && q.Limit == 0)) {
			t.Fatalf("ParseQuota gave %+v", q)
		}
	})
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		p     retry.Policy
		field string // "" means valid
	}{
		{"zero value", retry.Policy{}, ""},
		{"disable retry", retry.Policy{MaxAttempts: 1}, ""},
		{"negative attempts", retry.Policy{MaxAttempts: -1}, "MaxAttempts"},
		{"negative initial", retry.Policy{InitialBackoff: -time.Second}, "InitialBackoff"},
		{"negative max", retry.Policy{MaxBackoff: -time.Second}, "MaxBackoff"},
		{"negative retry-after cap", retry.Policy{MaxRetryAfter: -1}, "MaxRetryAfter"},
		{"initial above max", retry.Policy{InitialBackoff: 2 * time.Second, MaxBackoff: time.Second}, "InitialBackoff"},
		{"initial above default max is fine", retry.Policy{InitialBackoff: 40 * time.Second}, ""},
		{"negative stall disables", retry.Policy{StallTimeout: -1}, ""},
		{"blank method", retry.Policy{Methods: []string{"GET", ""}}, "Methods"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.p.Validate()
			if c.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var pe *retry.PolicyError
			if !errorsAs(err, &pe) || pe.Field != c.field {
				t.Fatalf("Validate() = %v, want a PolicyError naming %s", err, c.field)
			}
		})
	}
}

func TestStatusSets(t *testing.T) {
	t.Parallel()
	for code := 100; code < 600; code++ {
		gw := code == 429 || code == 502 || code == 503 || code == 504
		if got := retry.GatewayStatus(code); got != gw {
			t.Errorf("GatewayStatus(%d) = %v", code, got)
		}
		any := code == 429 || code >= 500
		if got := retry.AnyServerError(code); got != any {
			t.Errorf("AnyServerError(%d) = %v", code, got)
		}
	}
}

package ratelimit_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
)

func TestParse(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	cases := []struct {
		name   string
		header http.Header
		want   ratelimit.Quota
		ok     bool
	}{
		{"structured", http.Header{"Ratelimit": {`"default";r=0;t=30`}}, ratelimit.Quota{Remaining: 0, Reset: 30 * time.Second, Name: "default"}, true},
		{"structured several, tightest wins", http.Header{"Ratelimit": {`"burst";r=5;t=1, "day";r=0;t=3600`}}, ratelimit.Quota{Remaining: 0, Reset: time.Hour, Name: "day"}, true},
		{"structured with spaces, as express-rate-limit sends", http.Header{"Ratelimit": {`"50-in-5sec"; r=0; t=4`}, "Ratelimit-Policy": {`"50-in-5sec"; q=50; w=5; pk=:YWJj:`}},
			ratelimit.Quota{Remaining: 0, Reset: 4 * time.Second, Limit: 50, Window: 5 * time.Second, Name: "50-in-5sec"}, true},
		{"two stacked limiters, appended", http.Header{"Ratelimit": {`"a"; r=3; t=1`, `"b"; r=0; t=9`}, "Ratelimit-Policy": {`"a"; q=10; w=1`, `"b"; q=30; w=10`}},
			ratelimit.Quota{Remaining: 0, Reset: 9 * time.Second, Limit: 30, Window: 10 * time.Second, Name: "b"}, true},
		{"draft-6 with its policy", http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"3"}, "Ratelimit-Limit": {"50"}, "Ratelimit-Policy": {"50;w=5"}},
			ratelimit.Quota{Remaining: 0, Reset: 3 * time.Second, Limit: 50, Window: 5 * time.Second}, true},
		{"draft-7 with its policy", http.Header{"Ratelimit": {"limit=50, remaining=0, reset=3"}, "Ratelimit-Policy": {"50;w=5"}},
			ratelimit.Quota{Remaining: 0, Reset: 3 * time.Second, Limit: 50, Window: 5 * time.Second}, true},
		{"github resource", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1800000010"}, "X-Ratelimit-Resource": {"search"}},
			ratelimit.Quota{Remaining: 0, Reset: 10 * time.Second, Name: "search", ResetUnix: true}, true},
		{"decimal reset", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1.25"}}, ratelimit.Quota{Remaining: 0, Reset: 1250 * time.Millisecond}, true},
		{"reset beyond a day not believed", http.Header{"Ratelimit": {`"x";r=0;t=2147483647`}}, ratelimit.Quota{Remaining: 0, Name: "x"}, true},
		{"window beyond a day not believed", http.Header{"Ratelimit": {`"default";r=0;t=2`}, "Ratelimit-Policy": {`"default";q=1;w=2147483647`}},
			ratelimit.Quota{Remaining: 0, Reset: 2 * time.Second, Name: "default"}, true},
		{"huge limit not believed", http.Header{"Ratelimit": {`r=0;t=2`}, "Ratelimit-Policy": {`q=99999999999;w=1`}}, ratelimit.Quota{Remaining: 0, Reset: 2 * time.Second}, true},
		{"overlong digits", http.Header{"X-Ratelimit-Remaining": {"0000000000000000000001"}}, ratelimit.Quota{Remaining: -1}, false},
		{"older combined form", http.Header{"Ratelimit": {"limit=100, remaining=7, reset=12"}}, ratelimit.Quota{Remaining: 7, Reset: 12 * time.Second, Limit: 100}, true},
		{"older separate fields", http.Header{"Ratelimit-Remaining": {"3"}, "Ratelimit-Reset": {"9"}}, ratelimit.Quota{Remaining: 3, Reset: 9 * time.Second}, true},
		{"x-ratelimit delta", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"15"}}, ratelimit.Quota{Remaining: 0, Reset: 15 * time.Second}, true},
		{"x-ratelimit epoch", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1800000060"}}, ratelimit.Quota{Remaining: 0, Reset: time.Minute, ResetUnix: true}, true},
		{"x-ratelimit with its limit", http.Header{"X-Ratelimit-Remaining": {"19"}, "X-Ratelimit-Reset": {"1800000002"}, "X-Ratelimit-Limit": {"20"}},
			ratelimit.Quota{Remaining: 19, Reset: 2 * time.Second, Limit: 20, ResetUnix: true}, true},
		{"malformed remaining ignored", http.Header{"X-Ratelimit-Remaining": {"lots"}}, ratelimit.Quota{Remaining: -1, Reset: 0}, false},
		{"malformed structured ignored", http.Header{"Ratelimit": {`"x";r=-1;t=zz`}}, ratelimit.Quota{Remaining: -1, Reset: 0}, false},
		{"garbage reset ignored", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"NaN"}}, ratelimit.Quota{Remaining: 0, Reset: 0}, true},
		{"nothing", http.Header{}, ratelimit.Quota{Remaining: -1, Reset: 0}, false},
		{"with its policy", http.Header{"Ratelimit": {`"default";r=0;t=30`}, "Ratelimit-Policy": {`"default";q=100;w=60`}},
			ratelimit.Quota{Remaining: 0, Reset: 30 * time.Second, Limit: 100, Window: time.Minute, Name: "default"}, true},
		{"the policy of the same name", http.Header{"Ratelimit": {`"a";r=0;t=1`}, "Ratelimit-Policy": {`"b";q=1000;w=3600, "a";q=10;w=1`}},
			ratelimit.Quota{Remaining: 0, Reset: time.Second, Limit: 10, Window: time.Second, Name: "a"}, true},
		{"tightest policy of an unnamed quota", http.Header{"Ratelimit": {`r=0;t=1`}, "Ratelimit-Policy": {`"a";q=10;w=1, "b";q=1000;w=3600`}},
			ratelimit.Quota{Remaining: 0, Reset: time.Second, Limit: 1000, Window: time.Hour}, true},
		{"a policy of another limit belongs to another limiter", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Reset": {"1800000001"},
			"Ratelimit": {"limit=25, remaining=15, reset=3"}, "Ratelimit-Policy": {"25;w=3"}},
			ratelimit.Quota{Remaining: 0, Reset: time.Second, Limit: 10, ResetUnix: true}, true},
		// ADR 0211: a policy is read beside the draft's own fields, not
		// beside X-RateLimit fields alone, which no limiter sends with one.
		{"X-RateLimit fields alone read no policy", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Reset": {"1800000001"},
			"Ratelimit-Policy": {"10;w=1"}},
			ratelimit.Quota{Remaining: 0, Reset: time.Second, Limit: 10, ResetUnix: true}, true},
		{"X-RateLimit fields beside RateLimit-Remaining read the policy", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Reset": {"1800000001"},
			"Ratelimit-Remaining": {"5"}, "Ratelimit-Reset": {"3"}, "Ratelimit-Policy": {"10;w=1"}},
			ratelimit.Quota{Remaining: 0, Reset: time.Second, Limit: 10, Window: time.Second, ResetUnix: true}, true},
		{"X-RateLimit fields beside RateLimit read the policy", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Reset": {"1800000001"},
			"Ratelimit": {`"other";r=5;t=3`}, "Ratelimit-Policy": {`"other";q=50;w=5, 10;w=1`}},
			ratelimit.Quota{Remaining: 0, Reset: time.Second, Limit: 10, Window: time.Second, ResetUnix: true}, true},
		{"no policy of that name", http.Header{"Ratelimit": {`"a";r=0;t=1`}, "Ratelimit-Policy": {`"b";q=10;w=1`}},
			ratelimit.Quota{Remaining: 0, Reset: time.Second, Name: "a"}, true},
		{"malformed policy ignored", http.Header{"Ratelimit": {`"a";r=0;t=1`}, "Ratelimit-Policy": {`"a";q=x;w=-1`}},
			ratelimit.Quota{Remaining: 0, Reset: time.Second, Name: "a"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ratelimit.Parse(c.header, now)
			if got != c.want || ok != c.ok {
				t.Errorf("Parse = %+v, %v; want %+v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// Parse runs on every response of a paced transport with a reporter:
// it allocates nothing, whatever the fields say.
func TestParseAllocatesNothing(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	headers := []http.Header{
		{"Ratelimit": {`"50-in-5sec"; r=7; t=4`}, "Ratelimit-Policy": {`"50-in-5sec"; q=50; w=5; pk=:YWJj:`}},
		{"Ratelimit": {"limit=50, remaining=7, reset=3"}, "Ratelimit-Policy": {"50;w=5"}},
		{"Ratelimit-Remaining": {"7"}, "Ratelimit-Reset": {"3"}, "Ratelimit-Limit": {"50"}, "Ratelimit-Policy": {"50;w=5"}},
		{"X-Ratelimit-Remaining": {"7"}, "X-Ratelimit-Reset": {"1800000010"}, "X-Ratelimit-Resource": {"core"}},
		{"X-Ratelimit-Remaining": {"lots"}, "X-Ratelimit-Reset": {"NaN"}, "Ratelimit": {`"x";r=-1;t=zz`}},
	}
	for _, h := range headers {
		if n := testing.AllocsPerRun(100, func() { ratelimit.Parse(h, now) }); n != 0 {
			t.Errorf("Parse(%v) allocates %v times", h, n)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`"default";r=0;t=30`, "0", "15")
	f.Add("limit=100, remaining=7, reset=12", "x", "1800000060")
	f.Add(`"burst";r=3;t=20;q=100;w=60, "daily";r=500;t=3000;q=1000;w=86400;qu="requests";pk=:YWJj:`, "0", "1800000001")
	f.Fuzz(func(t *testing.T, rl, rem, reset string) {
		h := http.Header{"Ratelimit": {rl}, "X-Ratelimit-Remaining": {rem}, "X-Ratelimit-Reset": {reset}, "Ratelimit-Policy": {rl}}
		q, ok := ratelimit.Parse(h, time.Unix(1_800_000_000, 0))
		if ok && (q.Remaining < 0 || q.Reset < 0 || q.Reset > ratelimit.MaxPeriod || q.Window < 0 ||
			q.Window > ratelimit.MaxPeriod || q.Limit < 0 || (q.Window > 0 && q.Limit == 0)) {
			t.Fatalf("Parse gave %+v", q)
		}
		for _, w := range ratelimit.Windows(h, time.Unix(1_800_000_000, 0)) {
			if w.Remaining < 0 || w.Reset < 0 || w.Reset > ratelimit.MaxPeriod || w.Window < 0 ||
				w.Window > ratelimit.MaxPeriod || w.Limit < 0 || (w.Window > 0 && w.Limit == 0) || w.Remaining < q.Remaining {
				t.Fatalf("Windows gave %+v beside Parse's %+v", w, q)
			}
		}
	})
}

// Whatever a RateLimit field holds, what it says is bounded, and a quota
// beside it that leaves fewer requests still counts: the tightest wins.
func FuzzRateLimit(f *testing.F) {
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
		q, ok := ratelimit.Parse(http.Header{"Ratelimit": {v}}, t0)
		if !ok && q.Remaining != -1 || ok && (q.Remaining < 0 || q.Reset < 0 || q.Reset > ratelimit.MaxPeriod || q.Limit < 0 || q.Limit > 1<<30) {
			t.Fatalf("Parse(RateLimit: %q) = %+v, %v", v, q, ok)
		}
		tight, ok := ratelimit.Parse(http.Header{"Ratelimit": {v, `"fewer";r=0;t=86400`}}, t0)
		if !ok || tight.Remaining != 0 || (tight.Name != "fewer" && tight.Reset != ratelimit.MaxPeriod) {
			t.Fatalf("Parse(RateLimit: %q, and a spent quota) = %+v, %v; want the spent quota", v, tight, ok)
		}
	})
}

// Whatever the fields of every form say together, the quota read is
// bounded, and it is read the same way twice.
func FuzzParseFields(f *testing.F) {
	f.Add(`"50-in-5sec"; r=37; t=4`, `"50-in-5sec"; q=50; w=5; pk=:YWJj:`, "", "", "", "", "")
	f.Add("", "", "4987", "1800000060", "5000", "core", "")
	f.Add("limit=25, remaining=15, reset=3", "25;w=3", "0", "1800000001", "10", "", "")
	f.Add(`"a";r=0;t=1`, `"b";q=1000;w=3600, "core";q=10;w=1`, "0", " 1.5 ", `"10"`, " core ", "7")
	f.Add("", "50;w=5", "", "", "", "", "0")
	f.Add(`"burst";r=3;t=20, "daily";r=500;t=3000`, `"burst";q=100;w=60;qu="requests", "daily";q=1000;w=86400;pk=:YWJj:`, "4999", "1800000060", "5000", "core", "")
	f.Add(`"a";r=5;t=1, "a";r=0;t=2, "";r=1;t=3`, `"a";q=5;w=1, "a";q=9;w=9, 10;w=1`, "0", "7", "", "", "2")
	f.Fuzz(func(t *testing.T, rl, policy, rem, reset, limit, resource, splitRem string) {
		h := http.Header{}
		for k, v := range map[string]string{"Ratelimit": rl, "Ratelimit-Policy": policy, "X-Ratelimit-Remaining": rem,
			"X-Ratelimit-Reset": reset, "X-Ratelimit-Limit": limit, "X-Ratelimit-Resource": resource,
			"Ratelimit-Remaining": splitRem, "Ratelimit-Reset": reset, "Ratelimit-Limit": limit} {
			if v != "" {
				h[k] = []string{v}
			}
		}
		q, ok := ratelimit.Parse(h, t0)
		if ok && (q.Remaining < 0 || q.Reset < 0 || q.Reset > ratelimit.MaxPeriod || q.Window < 0 ||
			q.Window > ratelimit.MaxPeriod || q.Limit < 0 || q.Limit > 1<<30 || (q.Window > 0 && q.Limit == 0)) {
			t.Fatalf("Parse(%v) = %+v", h, q)
		}
		if again, ok2 := ratelimit.Parse(h, t0); again != q || ok2 != ok {
			t.Fatalf("Parse(%v) = %+v, then %+v", h, q, again)
		}
		// Windows gives every quota, one per name, each bounded, the one
		// Parse picks among them.
		windows := ratelimit.Windows(h, t0)
		if (len(windows) > 0) != ok || ok && !slices.Contains(windows, q) {
			t.Fatalf("Windows(%v) = %+v beside Parse's %+v, %v", h, windows, q, ok)
		}
		names := map[string]bool{}
		for _, w := range windows {
			if names[w.Name] || w.Remaining < 0 || w.Reset < 0 || w.Reset > ratelimit.MaxPeriod || w.Window < 0 ||
				w.Window > ratelimit.MaxPeriod || w.Limit < 0 || w.Limit > 1<<30 || (w.Window > 0 && w.Limit == 0) {
				t.Fatalf("Windows(%v) = %+v", h, windows)
			}
			names[w.Name] = true
		}
	})
}

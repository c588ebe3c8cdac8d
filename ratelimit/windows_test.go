package ratelimit_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
)

func TestWindows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		header http.Header
		want   []ratelimit.Quota
	}{
		{"draft 10, two windows with their policies", http.Header{
			"Ratelimit":        {`"burst";r=3;t=20, "daily";r=500;t=3000`},
			"Ratelimit-Policy": {`"burst";q=100;w=60;qu="requests", "daily";q=1000;w=86400;pk=:YWJj:`}},
			[]ratelimit.Quota{{Remaining: 3, Reset: 20 * time.Second, Limit: 100, Window: time.Minute, Name: "burst"},
				{Remaining: 500, Reset: 3000 * time.Second, Limit: 1000, Window: 24 * time.Hour, Name: "daily"}}},
		{"one name twice: the tightest", http.Header{"Ratelimit": {`"a";r=5;t=1`, `"a";r=2;t=3`}},
			[]ratelimit.Quota{{Remaining: 2, Reset: 3 * time.Second, Name: "a"}}},
		{"GitHub's beside the draft's", http.Header{
			"X-Ratelimit-Remaining": {"4999"}, "X-Ratelimit-Reset": {"1800000060"}, "X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Resource": {"core"},
			"Ratelimit": {`"burst";r=0;t=2`}, "Ratelimit-Policy": {`"burst";q=10;w=2`}},
			[]ratelimit.Quota{{Remaining: 0, Reset: 2 * time.Second, Limit: 10, Window: 2 * time.Second, Name: "burst"},
				{Remaining: 4999, Reset: time.Minute, Limit: 5000, ResetUnix: true, Name: "core"}}},
		{"nothing", http.Header{"Ratelimit-Policy": {`"a";q=1;w=1`}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ratelimit.Windows(c.header, t0)
			if !slices.Equal(got, c.want) {
				t.Errorf("Windows = %+v\nwant %+v", got, c.want)
			}
			if tight, ok := ratelimit.Parse(c.header, t0); ok && !slices.Contains(got, tight) {
				t.Errorf("Parse's %+v is not among the windows", tight)
			}
		})
	}
}

// observeAll tells p every window of h, as the retry transport does.
func observeAll(p ratelimit.Limiter, route string, h http.Header, sent, now time.Time) {
	for _, q := range ratelimit.Windows(h, now) {
		p.Observe("api", route, q, sent, now)
	}
}

// Every window is held at once: a request waits for the latest reset among
// the spent windows it draws, and one window's room does not lift another.
func TestPacerHoldsEveryWindow(t *testing.T) {
	t.Parallel()
	var p ratelimit.Pacer
	observeAll(&p, "items", http.Header{"Ratelimit": {`"burst";r=0;t=20, "daily";r=500;t=3000`}}, t0, t0)
	if h := p.Hold("api", "items", t0, time.Hour); h.Wait != 20*time.Second {
		t.Fatalf("burst spent: %+v, want its 20s reset", h)
	}
	now := t0.Add(20 * time.Second)
	observeAll(&p, "items", http.Header{"Ratelimit": {`"burst";r=0;t=20, "daily";r=0;t=2980`}}, now, now)
	if h := p.Hold("api", "items", now, 2*time.Hour); h.Wait != 2980*time.Second {
		t.Fatalf("both spent: %+v, want the daily reset, the latest", h)
	}
	later := now.Add(30 * time.Second)
	observeAll(&p, "items", http.Header{"Ratelimit": {`"burst";r=9;t=10`}}, later, later)
	if h := p.Hold("api", "items", later, 2*time.Hour); h.Wait != 2950*time.Second {
		t.Fatalf("burst with room, daily spent: %+v, want the daily reset", h)
	}
}

// A limiter whose windows reset on clock seconds, and whose
// X-RateLimit-Reset names that second, draws no early request: the pacer
// wakes at the second the field names, whatever fraction of a second the
// window's first request was sent at.
func TestPacerWakesAtClockSecondReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit, window = 5, 2 // requests per window of whole seconds
		var p ratelimit.Pacer
		used, period, refused := 0, int64(-1), 0
		server := func(at time.Time) http.Header { // a fixed window on clock seconds
			if k := at.Unix() / window; k != period {
				period, used = k, 0
			}
			used++
			if used > limit {
				refused++
			}
			return http.Header{"X-Ratelimit-Limit": {strconv.Itoa(limit)},
				"X-Ratelimit-Remaining": {strconv.Itoa(max(limit-used, 0))},
				"X-Ratelimit-Reset":     {strconv.FormatInt((period+1)*window, 10)}}
		}
		time.Sleep(600 * time.Millisecond) // the first request goes 0.6s past a second
		const rtt = 20 * time.Millisecond
		for range 40 {
			if h := p.Hold("api", "", time.Now(), time.Minute); h.Wait > 0 {
				time.Sleep(h.Wait)
			}
			sent := time.Now()
			time.Sleep(rtt / 2)
			h := server(time.Now())
			time.Sleep(rtt / 2)
			observeAll(&p, "", h, sent, time.Now())
		}
		if refused != 0 {
			t.Errorf("%d requests reached the limiter before its window reset", refused)
		}
	})
}

// A reserve leaves part of every window: the window counts as spent with
// that part remaining, and only the rest is released after the reset.
func TestPacerReserve(t *testing.T) {
	t.Parallel()
	p := ratelimit.Pacer{Reserve: 0.2}
	q := ratelimit.Quota{Remaining: 3, Reset: 5 * time.Second, Limit: 10, Window: 10 * time.Second, Name: ""}
	p.Observe("api", "", q, t0, t0)
	if h := p.Hold("api", "", t0, time.Minute); h.Wait != 0 {
		t.Fatalf("3 of 10 left with 2 reserved: held %v", h.Wait)
	}
	q.Remaining = 2
	p.Observe("api", "", q, t0, t0)
	for i := range 3 {
		want := 5*time.Second + time.Duration(i)*1250*time.Millisecond // 10s over the 8 not reserved
		if h := p.Hold("api", "", t0, time.Minute); h.Wait != want {
			t.Fatalf("held request %d: %+v, want %v", i, h, want)
		}
	}
	for _, r := range []float64{-0.1, 0.95, math.NaN()} {
		var re *ratelimit.ReserveError
		if err := (&ratelimit.Pacer{Reserve: r}).Validate(); !errors.As(err, &re) || !(re.Reserve == r || r != r) {
			t.Errorf("Validate of Reserve %v = %v, want a *ReserveError", r, err)
		}
	}
	if err := (&ratelimit.Pacer{Reserve: 0.9}).Validate(); err != nil {
		t.Errorf("Validate of Reserve 0.9 = %v", err)
	}
}

func TestETA(t *testing.T) {
	t.Parallel()
	s := time.Second
	burst := func(rem int64, reset time.Duration) ratelimit.Window {
		return ratelimit.Window{Limit: 20, Period: 10 * s, Remaining: rem, Reset: reset}
	}
	hourly := func(rem int64, reset time.Duration) ratelimit.Window {
		return ratelimit.Window{Limit: 100, Period: 60 * s, Remaining: rem, Reset: reset}
	}
	for _, c := range []struct {
		name     string
		requests int64
		windows  []ratelimit.Window
		rate     float64
		want     time.Duration
	}{
		{"nothing known", 10, nil, 0, 0},
		{"measured alone", 10, nil, 2, 5 * s},
		{"within what remains", 5, []ratelimit.Window{burst(10, 3*s)}, 0, 0},
		{"one window", 25, []ratelimit.Window{{Limit: 10, Period: s, Remaining: 0, Reset: s / 2}}, 0, 2500 * time.Millisecond},
		{"measured slower", 25, []ratelimit.Window{{Limit: 10, Period: s, Remaining: 0, Reset: s / 2}}, 1, 25 * s},
		{"measured faster", 25, []ratelimit.Window{{Limit: 10, Period: s, Remaining: 0, Reset: s / 2}}, 100, 2500 * time.Millisecond},
		{"limit not known: free after the reset", 1000, []ratelimit.Window{{Remaining: 0, Reset: 2 * s}}, 0, 2 * s},
		{"two windows, the hourly binds", 2000, []ratelimit.Window{burst(20, 10*s), hourly(100, 60*s)}, 0, 1180 * s},
		{"two windows, part spent", 30, []ratelimit.Window{burst(0, 4*s), hourly(25, 50*s)}, 0, 50 * s},
	} {
		if got := ratelimit.ETA(c.requests, c.windows, c.rate); got != c.want {
			t.Errorf("%s: ETA = %v, want %v", c.name, got, c.want)
		}
	}
}

// simulate sends requests one by one, each at the first instant every
// window has room for it, and returns when the last is sent.
func simulate(requests int64, windows []ratelimit.Window) time.Duration {
	used := make([]map[int64]int64, len(windows))
	for i := range used {
		used[i] = map[int64]int64{}
	}
	period := func(w ratelimit.Window, t time.Duration) (k int64, allowed int64, end time.Duration) {
		if t < w.Reset {
			return 0, w.Remaining, w.Reset
		}
		k = int64((t-w.Reset)/w.Period) + 1
		return k, w.Limit, w.Reset + time.Duration(k)*w.Period
	}
	var t time.Duration
	for range requests {
		for moved := true; moved; {
			moved = false
			for i, w := range windows {
				if k, allowed, end := period(w, t); used[i][k] >= allowed {
					t, moved = end, true
				}
			}
		}
		for i, w := range windows {
			k, _, _ := period(w, t)
			used[i][k]++
		}
	}
	return t
}

// Against a simulation of sending as fast as two windows (20 per 10s and
// 100 per 60s) allow, in any state, the ETA is within 1%.
func TestETAAgainstSimulation(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		windows := []ratelimit.Window{
			{Limit: 20, Period: 10 * time.Second, Remaining: r.Int64N(21), Reset: time.Duration(r.Int64N(10_000)) * time.Millisecond},
			{Limit: 100, Period: 60 * time.Second, Remaining: r.Int64N(101), Reset: time.Duration(r.Int64N(60_000)) * time.Millisecond},
		}
		requests := 200 + r.Int64N(2000)
		want, got := simulate(requests, windows), ratelimit.ETA(requests, windows, 0)
		if math.Abs(float64(got-want)) > 0.01*float64(want) {
			t.Errorf("%d requests, %+v: ETA %v, simulation %v", requests, windows, got, want)
		}
	}
}

// The pacer's ETA uses every window it heard of for the host and route,
// less its reserve: full windows of 40 per 10s and 200 per 60s with half
// reserved are those of TestETA's 20 per 10s and 100 per 60s.
func TestPacerETA(t *testing.T) {
	t.Parallel()
	p := ratelimit.Pacer{Reserve: 0.5}
	observeAll(&p, "items", http.Header{"Ratelimit": {`"burst";r=40;t=10, "hourly";r=200;t=60`},
		"Ratelimit-Policy": {`"burst";q=40;w=10, "hourly";q=200;w=60`}}, t0, t0)
	if got := p.ETA("api", "items", 2000, 0, t0); got != 1180*time.Second {
		t.Errorf("ETA = %v, want 1180s", got)
	}
	if got := p.ETA("api", "other", 2000, 4, t0); got != 500*time.Second {
		t.Errorf("ETA on a route that drew no window = %v, want the measured 500s", got)
	}
	if got := p.ETA("api", "items", 2000, 0, t0.Add(10*time.Minute)); got != 1180*time.Second {
		// Ten minutes on, both windows reset again on the same grid.
		t.Errorf("ETA ten minutes on = %v", got)
	}
}

func TestParseProblem(t *testing.T) {
	t.Parallel()
	h := http.Header{"Content-Type": {"application/problem+json; charset=utf-8"}}
	body := []byte(`{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"over","violated-policies":["daily"]}`)
	pr, ok := ratelimit.ParseProblem(h, body)
	if !ok || pr.Type != ratelimit.ProblemQuotaExceeded || !slices.Equal(pr.Violated, []string{"daily"}) {
		t.Fatalf("ParseProblem = %+v, %v", pr, ok)
	}
	windows := []ratelimit.Quota{{Remaining: 3, Reset: 20 * time.Second, Name: "burst"}, {Remaining: 500, Reset: time.Hour, Name: "daily"}}
	got := pr.Spend(windows, 0)
	if got[0] != windows[0] || got[1].Remaining != 0 || got[1].Reset != time.Hour || windows[1].Remaining != 500 {
		t.Errorf("Spend = %+v: want daily spent, burst as it was, the caller's slice untouched", got)
	}
	if got := pr.Spend(nil, 30*time.Second); len(got) != 1 || got[0] != (ratelimit.Quota{Remaining: 0, Reset: 30 * time.Second}) {
		t.Errorf("Spend of no named window = %+v, want the host spent for the Retry-After", got)
	}
	reduced := []byte(`{"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"}`)
	if pr, ok := ratelimit.ParseProblem(h, reduced); !ok || len(pr.Spend(windows, 5*time.Second)) != 3 {
		t.Errorf("reduced capacity: %+v, %v", pr, ok)
	}
	for _, c := range []struct {
		ct, body string
	}{
		{"application/json", string(body)},
		{"application/problem+json", `{"type":"about:blank"}`},
		{"application/problem+json", `{"type":`},
	} {
		if _, ok := ratelimit.ParseProblem(http.Header{"Content-Type": {c.ct}}, []byte(c.body)); ok {
			t.Errorf("ParseProblem(%s, %s) read a problem", c.ct, c.body)
		}
	}
}

// Whatever a problem body holds, reading it does not fail, and what it
// names is bounded.
func FuzzParseProblem(f *testing.F) {
	f.Add("application/problem+json", `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","violated-policies":["daily","burst"]}`)
	f.Add("application/problem+json; charset=utf-8", `{"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"}`)
	f.Add("application/json", `{"type":1}`)
	f.Fuzz(func(t *testing.T, ct, body string) {
		pr, ok := ratelimit.ParseProblem(http.Header{"Content-Type": {ct}}, []byte(body))
		if ok && (len(pr.Violated) > 8 || pr.Type != ratelimit.ProblemQuotaExceeded && pr.Type != ratelimit.ProblemReducedCapacity) {
			t.Fatalf("ParseProblem(%q, %q) = %+v", ct, body, pr)
		}
		for _, q := range pr.Spend([]ratelimit.Quota{{Remaining: 1, Name: "daily"}}, time.Second) {
			if q.Remaining < 0 || q.Reset < 0 {
				t.Fatalf("Spend gave %+v", q)
			}
		}
	})
}

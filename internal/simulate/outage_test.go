package simulate

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// smallOutage is scenario 2 shrunk for every test run: 100 clients, a 10 s
// outage.
func smallOutage() OutageConfig {
	return OutageConfig{Clients: 100, Before: 2 * time.Second, Down: 10 * time.Second, After: 10 * time.Second, Seed: 11}
}

func runOutage(t *testing.T, cfg OutageConfig) OutageResult {
	t.Helper()
	res, err := Outage(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestOutageIsDeterministic(t *testing.T) {
	t.Parallel()
	a, b := runOutage(t, smallOutage()), runOutage(t, smallOutage())
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different results")
	}
	render := func(res OutageResult) (table, svg []byte) {
		var tb, sb bytes.Buffer
		if err := WriteOutageTable(&tb, res); err != nil {
			t.Fatal(err)
		}
		if err := WriteOutageSVG(&sb, res); err != nil {
			t.Fatal(err)
		}
		return tb.Bytes(), sb.Bytes()
	}
	ta, sa := render(a)
	tb, sb := render(b)
	if !bytes.Equal(ta, tb) || !bytes.Equal(sa, sb) {
		t.Fatal("same seed, different table or chart bytes")
	}
	cfg := smallOutage()
	cfg.Seed++
	if c := runOutage(t, cfg); reflect.DeepEqual(a.Runs, c.Runs) {
		t.Fatal("another seed gave the same runs; the seed is not used")
	}
}

// Every request is counted once, and ends once.
func TestOutageAccounting(t *testing.T) {
	t.Parallel()
	res := runOutage(t, smallOutage())
	var requests int64 = -1
	for _, r := range res.Runs {
		stopped := r.Stops.Exhausted + r.Stops.Budget + r.Stops.RetryAfter + r.Stops.RateLimited
		if r.Succeeded+stopped != r.Requests {
			t.Errorf("%s: %d succeeded + %d stopped != %d requests", r.Policy, r.Succeeded, stopped, r.Requests)
		}
		if got := sum(r.Offered); got != r.Requests {
			t.Errorf("%s: %d requests offered in the bins, %d issued", r.Policy, got, r.Requests)
		}
		// Attempts reaching the service after the end of the run fall outside
		// the bins; without retry, only those of requests issued in the last.
		late := r.Succeeded - sum(r.Served)
		if late < 0 || (r.Policy == "no retry" && late > r.Offered[len(r.Offered)-1]) {
			t.Errorf("%s: %d served in the bins, %d succeeded", r.Policy, sum(r.Served), r.Succeeded)
		}
		if requests >= 0 && r.Requests != requests {
			t.Errorf("%s: %d requests, another policy %d; every policy must face the same requests", r.Policy, r.Requests, requests)
		}
		requests = r.Requests
		if n := len(r.Load); n != 22 || len(r.Offered) != n || len(r.Served) != n {
			t.Errorf("%s: series of %d, %d, %d bins; want 22", r.Policy, n, len(r.Offered), len(r.Served))
		}
	}
	none := res.Runs[0]
	if none.Policy != "no retry" || none.DownAttempts != none.DownFirst || none.Stops.Budget != 0 {
		t.Errorf("no retry re-sent: %+v", none)
	}
	if none.Requests < 100*50*20 || none.Requests > 100*50*24 {
		t.Errorf("%d requests from 100 clients at 50/s for 22 s", none.Requests)
	}
}

// The budget's own arithmetic decides the re-sends: a larger ratio lets more
// through, and without the floor the re-sends while down stay within what
// the ratio and the bank allow.
func TestOutageFollowsTheBudget(t *testing.T) {
	t.Parallel()
	run := func(b *retry.Budget) OutageRun {
		cfg := smallOutage()
		cfg.Policies = []OutagePolicy{{Name: "p", Policy: retry.Policy{MaxAttempts: 5, Budget: b}}}
		return runOutage(t, cfg).Runs[0]
	}
	tenth, half := run(&retry.Budget{}), run(&retry.Budget{Ratio: 0.5})
	if !(half.Amplification() > tenth.Amplification()+0.2) {
		t.Errorf("ratio 0.5 amplified %.3f, ratio 0.1 %.3f", half.Amplification(), tenth.Amplification())
	}
	if tenth.Stops.Budget == 0 {
		t.Error("the budget refused nothing during an outage")
	}
	noFloor := run(&retry.Budget{MinPerSecond: -1})
	resends := noFloor.DownAttempts - noFloor.DownFirst
	bound := int64(100*retry.DefaultBudgetMaxTokens) + int64(math.Ceil(retry.DefaultBudgetRatio*float64(noFloor.Requests)))
	if resends > bound {
		t.Errorf("without a floor, %d re-sends while down; the ratio and the bank allow at most %d", resends, bound)
	}
	if !(noFloor.Amplification() < tenth.Amplification()) {
		t.Errorf("removing the floor did not lower amplification: %.4f vs %.4f", noFloor.Amplification(), tenth.Amplification())
	}
}

// Retry-After is read with retry.ParseRetryAfter and obeyed as the
// transport obeys it: beyond MaxRetryAfter, retrying stops at once.
func TestOutageReadsRetryAfter(t *testing.T) {
	t.Parallel()
	cfg := smallOutage()
	cfg.RetryAfter = 61 * time.Second
	for _, r := range runOutage(t, cfg).Runs {
		if r.DownAttempts != r.DownFirst {
			t.Errorf("%s: re-sent after a Retry-After over MaxRetryAfter", r.Policy)
		}
		if r.Policy != "no retry" && r.Stops.RetryAfter == 0 {
			t.Errorf("%s: no request stopped on the long Retry-After: %+v", r.Policy, r.Stops)
		}
	}
	cfg.RetryAfter = 3 * time.Second
	cfg.Policies = []OutagePolicy{{Name: "retry", Policy: retry.Policy{MaxAttempts: 5}}}
	hinted := runOutage(t, cfg).Runs[0]
	cfg.RetryAfter = 0
	plain := runOutage(t, cfg).Runs[0]
	// A 3 s hint spaces re-sends further apart than the default backoff
	// (at most 0.5, 1, 2 and 4 s), so fewer land while the service is down.
	if !(hinted.DownAttempts < plain.DownAttempts) {
		t.Errorf("a 3 s Retry-After did not thin re-sends: %d vs %d attempts", hinted.DownAttempts, plain.DownAttempts)
	}
}

// Pacing acts on the RateLimit fields the service sends, through
// retry.ParseQuota: without them a pacing client behaves like one that does
// not pace (the same up to the order of random draws); with them it holds
// its requests.
func TestOutagePacingReadsRateLimit(t *testing.T) {
	t.Parallel()
	run := func(reset time.Duration, pace bool) OutageRun {
		cfg := smallOutage()
		cfg.Reset = reset
		cfg.Policies = []OutagePolicy{{Name: "p", Policy: retry.Policy{MaxAttempts: 5, Budget: &retry.Budget{}, Pace: pace}}}
		return runOutage(t, cfg).Runs[0]
	}
	a, b := run(-1, true), run(-1, false)
	if math.Abs(a.Amplification()-b.Amplification()) > 0.01 || math.Abs(a.SuccessOverall()-b.SuccessOverall()) > 0.005 ||
		a.DownFirst != b.DownFirst || a.Recovery != b.Recovery {
		t.Errorf("with no RateLimit fields, pacing changed the run:\n%+v\n%+v", a, b)
	}
	held, free := run(2*time.Second, true), run(2*time.Second, false)
	// Held requests wait for the reset, so some first attempts due while
	// the service is down reach it only after.
	if !(held.DownFirst < free.DownFirst && held.DownAttempts < free.DownAttempts) {
		t.Errorf("pacing on a 2 s reset: %d first attempts and %d attempts while down; %d and %d without pacing",
			held.DownFirst, held.DownAttempts, free.DownFirst, free.DownAttempts)
	}
	if long := run(61*time.Second, true); long.Stops.RetryAfter == 0 {
		t.Errorf("a reset over MaxRetryAfter stopped nothing: %+v", long.Stops)
	}
}

func TestOutageRejectsBadConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		cfg   OutageConfig
		field string
	}{
		{"negative clients", OutageConfig{Clients: -1}, "Clients"},
		{"negative rate", OutageConfig{Rate: -5}, "Rate"},
		{"rate not a number", OutageConfig{Rate: math.NaN()}, "Rate"},
		{"infinite capacity", OutageConfig{Capacity: math.Inf(1)}, "Capacity"},
		{"negative queue", OutageConfig{QueueLimit: -time.Second}, "QueueLimit"},
		{"negative outage", OutageConfig{Down: -time.Second}, "Before"},
		{"part of a second", OutageConfig{After: 1500 * time.Millisecond}, "Before"},
		{"over a day", OutageConfig{After: 25 * time.Hour}, "After"},
		{"reset not whole seconds", OutageConfig{Reset: 1500 * time.Millisecond}, "Reset"},
		{"negative retry-after", OutageConfig{RetryAfter: -time.Second}, "RetryAfter"},
		{"negative network", OutageConfig{NetworkStdDev: -time.Millisecond}, "NetworkMean"},
		{"share over one", OutageConfig{RecoveredShare: 1.5}, "RecoveredShare"},
		{"too many requests", OutageConfig{Clients: 1_000_000, Rate: 1000}, "Rate"},
		{"empty policies", OutageConfig{Policies: []OutagePolicy{}}, "Policies"},
		{"invalid policy", OutageConfig{Policies: []OutagePolicy{{Name: "a", Policy: retry.Policy{MaxAttempts: -1}}}}, "Policies"},
		{"too many attempts", OutageConfig{Policies: []OutagePolicy{{Name: "a", Policy: retry.Policy{MaxAttempts: 100_000}}}}, "Policies"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Outage(c.cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *ConfigError", err)
			}
			if ce.Field != c.field || ce.Scenario != "outage" {
				t.Errorf("error names %s.%s, want outage.%s: %v", ce.Scenario, ce.Field, c.field, err)
			}
		})
	}
}

// The goal of scenario 2 at full size: the budget keeps amplification at
// 1.1x while at least 99% of the requests issued once the service is back
// succeed.
//
// The goal is read at the precision it is stated in, one decimal (below
// 1.15). Strictly at or under 1.100 is out of reach for any budget whose
// ratio is 0.1: the ratio alone allows 1.100, the bank of MaxTokens adds
// MaxTokens/(rate × outage) on top, and the default floor leaks a little
// more (see the decision record on the goals). The strict figure is logged.
func TestOutageGoal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the full outage: 1,000 clients for 95 s under four policies")
	}
	t.Parallel()
	res := runOutage(t, OutageConfig{})
	runs := map[string]OutageRun{}
	for _, r := range res.Runs {
		runs[r.Policy] = r
		t.Logf("%-14s amplification %.4f, recovery %v (recovered %v), ok after %.4f, overall %.4f, peak %.2fx",
			r.Policy, r.Amplification(), r.Recovery, r.Recovered, r.SuccessAfter(), r.SuccessOverall(), r.Peak)
	}
	b := runs["retry+budget"]
	if amp := b.Amplification(); !(amp < 1.15) {
		t.Errorf("the budget amplified load %.3fx while down; the goal is 1.1x", amp)
	}
	if ok := b.SuccessAfter(); !(ok >= 0.99) {
		t.Errorf("with the budget, %.2f%% of requests after the return succeeded; the goal is 99%%", 100*ok)
	}
	if amp := runs["retry"].Amplification(); !(amp > 3) {
		t.Errorf("unbudgeted retry amplified only %.2fx; the comparison shows nothing", amp)
	}
}

func sum(s []int64) int64 {
	var n int64
	for _, v := range s {
		n += v
	}
	return n
}

package simulate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// smallOutage is scenario 2 shrunk for every test run: 40 clients, a 10 s
// outage.
func smallOutage() OutageConfig {
	return OutageConfig{Clients: 40, Before: 2 * time.Second, Down: 10 * time.Second, After: 10 * time.Second, Seed: 11}
}

func runOutage(t *testing.T, cfg OutageConfig) OutageResult {
	t.Helper()
	res, err := Outage(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// tinyOutage is smaller still, for tests that run it several times or only
// look at the shape of the output: 20 clients, a 4 s outage.
func tinyOutage() OutageConfig {
	return OutageConfig{Clients: 20, Before: 2 * time.Second, Down: 4 * time.Second, After: 4 * time.Second, Seed: 11}
}

func TestOutageIsDeterministic(t *testing.T) {
	t.Parallel()
	a, b := runOutage(t, tinyOutage()), runOutage(t, tinyOutage())
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
	cfg := tinyOutage()
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
	if n := int64(res.Config.Clients) * 50; none.Requests < n*20 || none.Requests > n*24 {
		t.Errorf("%d requests from %d clients at 50/s for 22 s", none.Requests, res.Config.Clients)
	}
}

// The budget's own arithmetic decides the re-sends: a larger ratio lets more
// through; without the floor the re-sends while down stay within what the
// ratio and the bank allow; and the floor, compared with the ratio over
// ten-second windows, adds nothing for a client busy enough that its ratio
// is above it, while it lets a quiet client re-send far more than its ratio.
func TestOutageFollowsTheBudget(t *testing.T) {
	t.Parallel()
	run := func(rate float64, b *budget.Budget) OutageRun {
		cfg := smallOutage()
		cfg.Rate = rate
		cfg.Policies = []OutagePolicy{{Name: "p", Policy: retry.Policy{MaxAttempts: 5, Budget: b}}}
		return runOutage(t, cfg).Runs[0]
	}
	tenth, half := run(50, &budget.Budget{}), run(50, &budget.Budget{Ratio: 0.5})
	if !(half.Amplification() > tenth.Amplification()+0.2) {
		t.Errorf("ratio 0.5 amplified %.3f, ratio 0.1 %.3f", half.Amplification(), tenth.Amplification())
	}
	if tenth.Stops.Budget == 0 {
		t.Error("the budget refused nothing during an outage")
	}
	noFloor := run(50, &budget.Budget{MinPerSecond: -1})
	resends := noFloor.DownAttempts - noFloor.DownFirst
	bound := int64(float64(smallOutage().Clients)*budget.DefaultMaxTokens) +
		int64(math.Ceil(budget.DefaultRatio*float64(noFloor.Requests)))
	if resends > bound {
		t.Errorf("without a floor, %d re-sends while down; the ratio and the bank allow at most %d", resends, bound)
	}
	// Compared between two withdrawals, the floor added 0.016 here.
	if d := tenth.Amplification() - noFloor.Amplification(); math.Abs(d) > 0.002 {
		t.Errorf("at 50 requests a second the floor changed amplification by %+.4f (%.4f with, %.4f without)",
			d, tenth.Amplification(), noFloor.Amplification())
	}
	quiet, quietNoFloor := run(2, &budget.Budget{}), run(2, &budget.Budget{MinPerSecond: -1})
	if !(quiet.Amplification() > quietNoFloor.Amplification()+0.5) {
		t.Errorf("at 2 requests a second the floor let through little: %.3f with it, %.3f without",
			quiet.Amplification(), quietNoFloor.Amplification())
	}
}

// Retry-After is read with retry.ParseRetryAfter and obeyed as the
// transport obeys it: beyond MaxRetryAfter, retrying stops at once.
func TestOutageReadsRetryAfter(t *testing.T) {
	t.Parallel()
	cfg := tinyOutage()
	cfg.RetryAfter = 61 * time.Second
	for _, r := range runOutage(t, cfg).Runs {
		if r.DownAttempts != r.DownFirst {
			t.Errorf("%s: re-sent after a Retry-After over MaxRetryAfter", r.Policy)
		}
		if r.Policy != "no retry" && r.Stops.RetryAfter == 0 {
			t.Errorf("%s: no request stopped on the long Retry-After: %+v", r.Policy, r.Stops)
		}
	}
	cfg = smallOutage()
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
// ratelimit.Parse: without them a pacing client behaves like one that does
// not pace (the same up to the order of random draws); with them it holds
// its requests.
func TestOutagePacingReadsRateLimit(t *testing.T) {
	t.Parallel()
	run := func(reset time.Duration, pace bool) OutageRun {
		cfg := smallOutage()
		cfg.Reset = reset
		cfg.Policies = []OutagePolicy{{Name: "p", Policy: retry.Policy{MaxAttempts: 5, Budget: &budget.Budget{}, Pacer: pacer(pace)}}}
		return runOutage(t, cfg).Runs[0]
	}
	a, b := run(-1, true), run(-1, false)
	// The order of draws moves the network delays of the first attempts
	// near the outage's edges, so a few of them land on the other side.
	if math.Abs(a.Amplification()-b.Amplification()) > 0.01 || math.Abs(a.SuccessOverall()-b.SuccessOverall()) > 0.005 ||
		math.Abs(float64(a.DownFirst-b.DownFirst)) > 0.001*float64(b.DownFirst) || a.Recovery != b.Recovery {
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

// A pacing hold is the library's: each client's ratelimit.Pacer names the wait,
// and the simulator takes it as the transport does. A wait over
// MaxRetryAfter stops the request before anything is drawn. When the 503s
// announce the quota (RateLimit-Policy), every hold is a slot of a spaced
// release, taken as it is: a client's held requests are sent one every
// Window/Limit, never closer, starting at the reset. When they do not, the
// held requests share the reset and each is jittered by
// holdWait of the pacer's answer, sized to the requests held
// before it, so they wake spread over up to a tenth of the hold after it,
// not at its instant.
func TestOutagePacingHoldIsThePacers(t *testing.T) {
	t.Parallel()
	policy := retry.Policy{MaxAttempts: 5, Budget: &budget.Budget{}, Pacer: new(ratelimit.Pacer)}
	run := func(reset time.Duration, unannounced bool) (OutageConfig, OutageRun, []holdTrace) {
		var holds []holdTrace
		cfg := tinyOutage()
		cfg.Reset = reset
		cfg.unannounced = unannounced
		cfg.Policies = []OutagePolicy{{Name: "p", Policy: policy}}
		cfg.trace = func(h holdTrace) { holds = append(holds, h) }
		res := runOutage(t, cfg)
		return res.Config, res.Runs[0], holds
	}
	// check compares each hold's wait with what the transport would wait
	// for it, and the instants held requests were sent with those the holds
	// named, client by client. It returns the holds.
	check := func(name string, spaced bool, traces []holdTrace) []holdTrace {
		t.Helper()
		var holds []holdTrace
		due, sent := map[int32][]time.Duration{}, map[int32][]time.Duration{}
		for _, h := range traces {
			if h.woke {
				sent[h.client] = append(sent[h.client], h.at)
				continue
			}
			holds = append(holds, h)
			due[h.client] = append(due[h.client], h.at+h.wait)
			if h.hold <= 0 || h.hold > retry.DefaultMaxRetryAfter {
				t.Fatalf("%s: client %d held for %v at %v", name, h.client, h.hold, h.at)
			}
			if h.spaced != spaced {
				t.Fatalf("%s: a hold of %v at %v is spaced %v; want %v", name, h.hold, h.at, h.spaced, spaced)
			}
			want := h.hold // a slot of a spaced release is not jittered
			if !spaced {
				want = holdWait(policy, ratelimit.Hold{Wait: h.hold, Jitter: h.jitter}, h.r)
			}
			if h.wait != want {
				t.Fatalf("%s: a hold of %v (spaced %v, r %v) waited %v; want %v", name, h.hold, h.spaced, h.r, h.wait, want)
			}
		}
		if len(holds) < 100 {
			t.Fatalf("%s: only %d holds traced", name, len(holds))
		}
		for c, want := range due {
			got := sent[c]
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: client %d sent held requests at %v; its holds ended at %v", name, c, got, want)
			}
		}
		return holds
	}

	// Announced: each client's share of the capacity, 60 a second.
	cfg, paced, traces := run(time.Second, false)
	holds := check("announced", true, traces)
	interval := time.Second / time.Duration(int64(cfg.Capacity)/int64(cfg.Clients))
	slots := map[int32][]time.Duration{}
	for _, h := range holds {
		slots[h.client] = append(slots[h.client], h.at+h.wait)
	}
	gaps, exact := 0, 0
	for c, s := range slots {
		slices.Sort(s)
		for i := 1; i < len(s); i++ {
			gap := s[i] - s[i-1]
			if gap < interval {
				t.Fatalf("client %d sent held requests at %v and %v, closer than the announced %v", c, s[i-1], s[i], interval)
			}
			gaps++
			if gap == interval {
				exact++
			}
		}
	}
	// Most held requests drain back to back; the rest start a new reset.
	if exact < gaps*9/10 {
		t.Errorf("of %d gaps between a client's held requests, %d are the announced %v", gaps, exact, interval)
	}
	if paced.Stops.RateLimited != 0 {
		t.Errorf("announced 1 s reset: %d holds over MaxRetryAfter", paced.Stops.RateLimited)
	}

	// Unannounced: the held requests share the reset, jittered.
	_, _, traces = run(time.Second, true)
	holds = check("unannounced", false, traces)
	type reset struct {
		client int32
		until  time.Duration
	}
	wakes := map[reset][]time.Duration{}
	longest := map[reset]time.Duration{}
	for _, h := range holds {
		k := reset{h.client, h.at + h.hold}
		wakes[k] = append(wakes[k], h.at+h.wait)
		longest[k] = max(longest[k], h.hold)
	}
	spread, groups := 0, 0
	for k, ws := range wakes {
		if len(ws) < 10 {
			continue
		}
		groups++
		// The jitter is sized to what is held: at most a tenth of the hold.
		lo, hi := slices.Min(ws), slices.Max(ws)
		if lo < k.until || hi > k.until+longest[k]/10 {
			t.Fatalf("client %d held to %v woke between %v and %v; want within a tenth of its %v hold after", k.client, k.until, lo, hi, longest[k])
		}
		slices.Sort(ws)
		if len(slices.Compact(ws)) >= len(ws)*9/10 {
			spread++
		}
	}
	if groups == 0 || spread < groups*9/10 {
		t.Errorf("of %d resets with 10 or more held requests, %d woke at distinct instants", groups, spread)
	}

	for _, unannounced := range []bool{false, true} {
		_, long, traces := run(61*time.Second, unannounced)
		check(fmt.Sprintf("61 s reset, unannounced %v", unannounced), !unannounced, traces)
		if long.Stops.RateLimited == 0 {
			t.Errorf("61 s reset, unannounced %v: no hold over MaxRetryAfter stopped a request: %+v", unannounced, long.Stops)
		}
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

// The goal of scenario 2: the budget keeps amplification at 1.1x while at
// least 99% of the requests issued once the service is back succeed; with
// pacing too, and the service then recovers rather than swinging around its
// capacity.
//
// The bound is 1.105, not 1.100: the ratio alone allows 1.100, and the bank
// of MaxTokens re-sends a client holds when the outage starts adds
// MaxTokens/(Rate × Down) = 10/(50 × 60) = 0.0033 on top; the floor no
// longer adds anything (it is compared with the ratio over ten-second
// windows). 1.105 leaves room for chance and fails on any leak as large as
// the per-withdrawal floor's (1.119x).
//
// By default the outage runs on the full timeline with 200 clients under
// "retry" and "retry+budget", and with 50 under "budget+pacing", the
// slowest under the race detector. Each client has its own budget and
// pacer, and the service's capacity follows the client count (so each
// client's announced quota stays the same), so amplification and success
// are the same as with 1,000 clients to three decimals. With STEADY_SIM_FULL=1 it runs the
// default scenario, all four policies, and logs the table the decision
// records quote.
func TestOutageGoal(t *testing.T) {
	skipGoalIfShort(t)
	t.Parallel()
	cfgs := []OutageConfig{
		{Clients: 200, Policies: policiesNamed(t, "retry", "retry+budget")},
		{Clients: 50, Policies: policiesNamed(t, "budget+pacing")},
	}
	if fullSize() {
		cfgs = []OutageConfig{{}}
	}
	runs := map[string]OutageRun{}
	for _, cfg := range cfgs {
		res := runOutage(t, cfg)
		var table bytes.Buffer
		if err := WriteOutageTable(&table, res); err != nil {
			t.Fatal(err)
		}
		t.Logf("scenario 2, %d clients:\n%s", res.Config.Clients, table.Bytes())
		for _, r := range res.Runs {
			runs[r.Policy] = r
			recovery := "never"
			if r.Recovered {
				recovery = r.Recovery.String()
			}
			t.Logf("%-14s amplification %.4f, recovery %s, ok after %.4f, overall %.4f, peak %.2fx",
				r.Policy, r.Amplification(), recovery, r.SuccessAfter(), r.SuccessOverall(), r.Peak)
		}
	}
	for _, name := range []string{"retry+budget", "budget+pacing"} {
		r, ok := runs[name]
		if !ok {
			t.Fatalf("no run of %s", name)
		}
		if amp := r.Amplification(); !(amp <= 1.105) {
			t.Errorf("%s amplified load %.4fx while down; the goal is 1.1x (at most 1.105)", name, amp)
		}
		if ok := r.SuccessAfter(); !(ok >= 0.99) {
			t.Errorf("%s: %.2f%% of requests after the return succeeded; the goal is 99%%", name, 100*ok)
		}
		// Unpaced, or paced without spacing the held requests, the
		// service swings around its capacity until the end of the run.
		if !r.Recovered {
			t.Errorf("%s: the service had not recovered by the end of the run", name)
		}
	}
	if amp := runs["retry"].Amplification(); !(amp > 3) {
		t.Errorf("unbudgeted retry amplified only %.2fx; the comparison shows nothing", amp)
	}
}

// policiesNamed returns the policies of [OutagePolicies] with these names.
func policiesNamed(t *testing.T, names ...string) []OutagePolicy {
	t.Helper()
	var ps []OutagePolicy
	for _, name := range names {
		i := slices.IndexFunc(OutagePolicies(), func(p OutagePolicy) bool { return p.Name == name })
		if i < 0 {
			t.Fatalf("no outage policy is named %q", name)
		}
		ps = append(ps, OutagePolicies()[i])
	}
	return ps
}

func sum(s []int64) int64 {
	var n int64
	for _, v := range s {
		n += v
	}
	return n
}

// pacer returns a pacer when on: a policy's Pacer turns pacing on.
func pacer(on bool) ratelimit.Limiter {
	if on {
		return new(ratelimit.Pacer)
	}
	return nil
}

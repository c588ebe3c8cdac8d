package simulate

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/breaker"
)

// overloadSize is the overload scenarios at test size: the outage
// (60 s down, two windows after), with fewer clients unless run at full
// size. Each client has its own breaker, so what one client's breaker does
// does not depend on how many there are.
func overloadSize() OutageConfig {
	cfg := OutageConfig{Clients: 40, Seed: 1}
	if fullSize() {
		cfg.Clients = DefaultOutageClients
	}
	return cfg
}

func byPolicy(t *testing.T, res OutageResult, name string) OutageRun {
	t.Helper()
	for _, r := range res.Runs {
		if r.Policy == name {
			return r
		}
	}
	t.Fatalf("no run of %q", name)
	return OutageRun{}
}

// The goal of the overload scenario (issue 24): a host answering 503 to
// everything for 60 s under steady load; steady with its defaults sends at
// most 1.2x the attempts a client without retries sends during the outage,
// and is back to 99% of its baseline success (100%) within two of the
// breaker's windows of the return.
func TestGoalOverloadOutage(t *testing.T) {
	skipGoalIfShort(t)
	t.Parallel()
	res, err := OverloadOutage(overloadSize())
	if err != nil {
		t.Fatal(err)
	}
	base, st := byPolicy(t, res, "no retry"), byPolicy(t, res, "steady")
	if r := st.DownRatio(base); r > 1.2 {
		t.Errorf("steady sent %.3fx the attempts of no retry while the service was down; want at most 1.2x", r)
	}
	if window := time.Minute; !st.Recovered || st.Recovery > 2*window {
		t.Errorf("steady recovered %v after %v; want within %v", st.Recovered, st.Recovery, 2*window)
	}
	if st.Opens == 0 || st.Stops.Overload == 0 {
		t.Errorf("steady's breakers opened %d times and refused %d requests; want both", st.Opens, st.Stops.Overload)
	}
	if b := byPolicy(t, res, "budget+pacing"); b.DownRatio(base) <= st.DownRatio(base) {
		t.Errorf("without the breaker %.3fx, with it %.3fx; want the breaker to send less", b.DownRatio(base), st.DownRatio(base))
	}
	var tb bytes.Buffer
	if err := WriteOverloadTable(&tb, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("overload, %d clients:\n%s", res.Config.Clients, tb.String())
}

// A flapping service, down and up in turn: the breakers open in each down
// half and close in each up half, and steady still sends less than no
// retry while it is down.
func TestGoalFlapping(t *testing.T) {
	skipGoalIfShort(t)
	t.Parallel()
	res, err := Flapping(overloadSize())
	if err != nil {
		t.Fatal(err)
	}
	base, st := byPolicy(t, res, "no retry"), byPolicy(t, res, "steady")
	if r := st.DownRatio(base); r >= 1 {
		t.Errorf("steady sent %.3fx the attempts of no retry into the flapping service; want less", r)
	}
	// Two down halves: each client's circuit opens in both.
	if min := 2 * int64(res.Config.Clients); st.Opens < min {
		t.Errorf("circuits opened %d times; want at least %d (twice a client)", st.Opens, min)
	}
	if !st.Recovered || st.Recovery > 2*time.Minute {
		t.Errorf("steady recovered %v after %v", st.Recovered, st.Recovery)
	}
	var tb bytes.Buffer
	if err := WriteOverloadTable(&tb, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("flapping, %d clients:\n%s", res.Config.Clients, tb.String())
}

// The breaker's draws come from the seed: the same seed, the same run.
func TestOverloadIsDeterministic(t *testing.T) {
	t.Parallel()
	cfg := tinyOutage()
	cfg.Policies = []OutagePolicy{SteadyPolicy()}
	a, err := Outage(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Outage(cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different results")
	}
	if a.Runs[0].Opens == 0 {
		t.Errorf("no circuit opened in a %v outage", cfg.Down)
	}
}

func TestOverloadConfigErrors(t *testing.T) {
	t.Parallel()
	cfg := tinyOutage()
	p := SteadyPolicy()
	p.Overload = &breaker.Config{FailureRatio: 2}
	cfg.Policies = []OutagePolicy{p}
	if _, err := Outage(cfg); err == nil || !strings.Contains(err.Error(), "Overload") {
		t.Errorf("invalid breaker template: %v", err)
	}
	cfg = tinyOutage()
	cfg.Flap = -time.Second
	if _, err := Outage(cfg); err == nil || !strings.Contains(err.Error(), "Flap") {
		t.Errorf("negative flap: %v", err)
	}
}

// Every policy side by side: the table and the chart name all five.
func TestAllPoliciesSideBySide(t *testing.T) {
	t.Parallel()
	cfg := tinyOutage()
	cfg.Policies = AllPolicies()
	res, err := Outage(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var tb, sb bytes.Buffer
	if err := WriteOutageTable(&tb, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteOutageSVG(&sb, res); err != nil {
		t.Fatal(err)
	}
	for _, p := range AllPolicies() {
		if !strings.Contains(tb.String(), p.Name) || !strings.Contains(sb.String(), p.Name) {
			t.Errorf("table or chart lacks %q", p.Name)
		}
	}
}

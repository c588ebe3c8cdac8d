package simulate

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// The headerless-429 scenario, with the default attempts: steady learns
// the limiter's window and finishes every part within 1.25x the floor,
// drawing fewer 429s than the backoff alone (whose parts run out of
// attempts in a closed window). (The figures are the seed's; the table is
// logged.)
func TestLimiterAIMD(t *testing.T) {
	t.Parallel()
	runs, err := Limiter(LimiterConfig{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Limiter(LimiterConfig{Seed: 1})
	if !reflect.DeepEqual(runs, again) {
		t.Fatal("same seed, different results")
	}
	plain, st := runs[0], runs[1]
	if st.Failed != 0 || st.Succeeded != DefaultLimiterParts {
		t.Errorf("steady: %d parts succeeded, %d failed; want all %d", st.Succeeded, st.Failed, DefaultLimiterParts)
	}
	if st.OverFloor() > 1.25 || st.Refused >= plain.Refused {
		t.Errorf("steady done after %v (%.3fx the floor) with %d 429s, retry with %d; want within 1.25x and fewer",
			st.Done, st.OverFloor(), st.Refused, plain.Refused)
	}
	if st.Done < st.Floor {
		t.Errorf("done after %v, before the limiter's floor %v", st.Done, st.Floor)
	}
	var tb bytes.Buffer
	if err := WriteLimiterTable(&tb, runs); err != nil {
		t.Fatal(err)
	}
	for _, p := range LimiterPolicies() {
		if !strings.Contains(tb.String(), p.Name) {
			t.Errorf("table lacks %q", p.Name)
		}
	}
	t.Logf("headerless 429s:\n%s", tb.String())
}

func TestLimiterConfigErrors(t *testing.T) {
	t.Parallel()
	for _, cfg := range []LimiterConfig{{Parts: -1}, {Workers: -1}, {Limit: -1}, {Window: -1}, {Policies: []OutagePolicy{}}} {
		if _, err := Limiter(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The scenarios of overload control run from the command: overload and
// flapping print the overload table, policies every policy with its chart.
func TestSimulateOverloadScenarios(t *testing.T) {
	for _, s := range []string{"overload", "flapping"} {
		code, out, errText := cli(t, "simulate", "-q", "--scenario", s, "--clients", "5")
		if code != exitOK || errText != "" {
			t.Fatalf("%s: exit %d, stderr %q", s, code, errText)
		}
		for _, want := range []string{"sent while down", "vs no retry", "no retry", "budget+pacing", "steady"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", s, want, out)
			}
		}
	}
	code, out, errText := cli(t, "simulate", "--scenario", "limiter")
	if code != exitOK || errText != "" || !strings.Contains(out, "vs floor") || !strings.Contains(out, "steady") {
		t.Errorf("limiter: exit %d, stderr %q, output:\n%s", code, errText, out)
	}
	svg := filepath.Join(t.TempDir(), "policies.svg")
	code, out, errText = cli(t, "simulate", "-q", "--scenario", "policies", "--clients", "5", "--plot", svg)
	if code != exitOK || errText != "" {
		t.Fatalf("policies: exit %d, stderr %q", code, errText)
	}
	chart, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"no retry", "retry+budget", "budget+pacing", "steady"} {
		if !strings.Contains(out, name) || !strings.Contains(string(chart), name) {
			t.Errorf("policies: table or chart lacks %q:\n%s", name, out)
		}
	}
	if code, _, errText := cli(t, "simulate", "--scenario", "overload", "--plot", svg, "--force"); code != exitUsage || !strings.Contains(errText, "--plot") {
		t.Errorf("overload --plot: exit %d, stderr %q; want a usage error", code, errText)
	}
	if code, _, errText := cli(t, "simulate", "--scenario", "nope"); code != exitUsage || !strings.Contains(errText, "flapping") {
		t.Errorf("--scenario nope: exit %d, stderr %q; want a usage error naming the scenarios", code, errText)
	}
}

func TestSimulateScenarioCompletion(t *testing.T) {
	code, out, _ := runBinary(t, nil, "__complete", "simulate", "--scenario", "")
	for _, want := range []string{"overload", "flapping", "limiter", "policies"} {
		if !strings.Contains(out, want+"\t") {
			t.Errorf("exit %d, completions lack %q:\n%s", code, want, out)
		}
	}
}

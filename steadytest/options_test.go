package steadytest_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/steadytest"
)

func TestValidateNamesTheBadOption(t *testing.T) {
	type opts = steadytest.ServerOptions
	type faults = steadytest.Faults
	type fault = steadytest.Fault
	cases := []struct {
		name  string
		opt   opts
		field string // "" means valid
	}{
		{"zero value", opts{}, ""},
		{"presets", opts{Faults: steadytest.Harsh(1)}, ""},
		{"negative rows", opts{Rows: -1}, "Rows"},
		{"too many rows", opts{Rows: steadytest.MaxRows + 1}, "Rows"},
		{"unknown style", opts{Style: 9}, "Style"},
		{"default above max", opts{DefaultLimit: 50, MaxLimit: 10}, "DefaultLimit"},
		{"default above default max", opts{DefaultLimit: 2000}, "DefaultLimit"},
		{"negative max", opts{MaxLimit: -1}, "MaxLimit"},
		{"negative url bytes", opts{MaxURLBytes: -1}, "MaxURLBytes"},
		{"cursor param clash", opts{Style: steadytest.Cursor, CursorParam: "offset"}, "CursorParam"},
		{"key place without key", opts{KeyHeader: "X-Api-Key"}, "KeyValue"},
		{"key without place", opts{KeyValue: "k"}, "KeyHeader"},
		{"required key without key", opts{RequireKey: true}, "RequireKey"},
		{"key query clash", opts{KeyValue: "k", KeyQuery: "limit"}, "KeyQuery"},
		{"probability above 1", opts{Faults: faults{Mix: []steadytest.Chance{{P: 1.5}}}}, "Faults.Mix[0].P"},
		{"probability NaN", opts{Faults: faults{Mix: []steadytest.Chance{{P: math.NaN()}}}}, "Faults.Mix[0].P"},
		{"probabilities sum above 1", opts{Faults: faults{Mix: []steadytest.Chance{{P: 0.6}, {P: 0.6}}}}, "Faults.Mix"},
		{"status not an error", opts{Faults: faults{Mix: []steadytest.Chance{{0.1, fault{Kind: steadytest.Status, Status: 200}}}}}, "Faults.Mix[0].Fault"},
		{"redirect not a 3xx", opts{Faults: faults{Script: map[int]fault{1: {Kind: steadytest.Redirect, Status: 200}}}}, "Faults.Script[1]"},
		{"script from zero", opts{Faults: faults{Script: map[int]fault{0: {}}}}, "Faults.Script[0]"},
		{"negative hang", opts{Faults: faults{Script: map[int]fault{1: {Kind: steadytest.Hang, For: -time.Second}}}}, "Faults.Script[1]"},
		{"quota exceeded is not configurable", opts{Faults: faults{Script: map[int]fault{1: {Kind: steadytest.QuotaExceeded}}}}, "Faults.Script[1]"},
		{"negative quota", opts{Faults: faults{Quota: steadytest.Quota{Limit: -1}}}, "Faults.Quota.Limit"},
		{"two RateLimit forms", opts{Faults: faults{Quota: steadytest.Quota{Limit: 1, Headers: steadytest.RateLimitCombined | steadytest.RateLimitStructured}}}, "Faults.Quota.Headers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.opt.Validate()
			if c.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var oe *steadytest.OptionsError
			if !errors.As(err, &oe) || !errors.Is(err, steadytest.ErrInvalidOptions) {
				t.Fatalf("Validate() = %v, want an *OptionsError", err)
			}
			if oe.Field != c.field || !strings.Contains(err.Error(), c.field) {
				t.Errorf("field = %q (%v), want %q", oe.Field, err, c.field)
			}
			if _, err := steadytest.NewHandler(c.opt); err == nil {
				t.Error("NewHandler accepted invalid options")
			}
		})
	}
}

func TestNewServerPanicsOnInvalidOptions(t *testing.T) {
	defer func() {
		if err, _ := recover().(error); !errors.Is(err, steadytest.ErrInvalidOptions) {
			t.Errorf("recovered %v, want an options error", err)
		}
	}()
	steadytest.NewServer(steadytest.ServerOptions{Rows: -1}).Close()
}

func TestNamesRoundTrip(t *testing.T) {
	for _, s := range []steadytest.Style{steadytest.LinkHeader, steadytest.JSONLinks, steadytest.Cursor} {
		if got, err := steadytest.ParseStyle(s.String()); err != nil || got != s {
			t.Errorf("ParseStyle(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := steadytest.ParseStyle("pages"); !errors.Is(err, steadytest.ErrInvalidOptions) {
		t.Errorf("ParseStyle(pages) error = %v", err)
	}
	for k := steadytest.None; k < steadytest.QuotaExceeded; k++ {
		if got, err := steadytest.ParseFaultKind(k.String()); err != nil || got != k {
			t.Errorf("ParseFaultKind(%q) = %v, %v", k, got, err)
		}
	}
	if _, err := steadytest.ParseFaultKind("quota-exceeded"); err == nil {
		t.Error("quota-exceeded parsed as a configurable fault")
	}
	for _, name := range []string{"none", "mild", "HARSH"} {
		if _, err := steadytest.Preset(name, 1); err != nil {
			t.Errorf("Preset(%q): %v", name, err)
		}
	}
	if _, err := steadytest.Preset("brutal", 1); err == nil {
		t.Error("Preset(brutal) accepted")
	}
}

func TestPresetsKeepWaitsShort(t *testing.T) {
	// The demo harvests through Harsh in well under a minute only if every
	// wait it contains is short and its failure rate leaves most requests
	// alone.
	for name, f := range map[string]steadytest.Faults{"mild": steadytest.Mild(1), "harsh": steadytest.Harsh(1)} {
		sum := 0.0
		for _, c := range f.Mix {
			sum += c.P
			if c.Fault.For > time.Second || c.Fault.RetryAfter > time.Second || c.Fault.For == 0 && (c.Fault.Kind == steadytest.Hang || c.Fault.Kind == steadytest.Stall) {
				t.Errorf("%s: %v waits too long", name, c.Fault)
			}
		}
		if sum > 0.3 {
			t.Errorf("%s fails %.0f%% of requests", name, sum*100)
		}
		if w := f.Quota.Window; w > 2*time.Second {
			t.Errorf("%s: quota window %v", name, w)
		}
	}
}

package config_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/config"
)

// formatSeconds writes d in the exact decimal form the parser reads back.
func formatSeconds(d time.Duration) string {
	return fmt.Sprintf("%d.%09d", d/time.Second, d%time.Second)
}

// FuzzFromLookup feeds arbitrary text to every variable. Properties: no
// panic; an accepted value written back in canonical form reads back to the
// same setting; a rejection is reported as *ConfigurationError values that
// name exactly the variables which fail on their own, and never quote the key.
func FuzzFromLookup(f *testing.F) {
	seeds := [][4]string{
		{"", "", "", ""},
		{"4", "60", "32", "k"},
		{"ten", "off", "0", "a\nb"},
		{"-1", "1e999", "1.5", ""},
		{" 3 ", " 2.5 ", " 8 ", " key "},
		{"+0", "NaN", "-0", "\x7f"},
		{"9223372036854775807", "9223372036.854775807", "99999999999999999999", "x"},
		{"1_000", "0x1p4", "1e-12", "REDACTED"},
		{"0", "-0.0", "1", "0"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3])
	}
	names := [...]string{"STEADY_RETRIES", "STEADY_STALL_TIMEOUT", "STEADY_CONCURRENT", "STEADY_API_KEY"}
	f.Fuzz(func(t *testing.T, retries, stall, concurrent, key string) {
		values := [...]string{retries, stall, concurrent, key}
		lookupOf := func(set map[string]string) func(string) (string, bool) {
			return func(n string) (string, bool) { v, ok := set[n]; return v, ok }
		}
		all := map[string]string{}
		for i, n := range names {
			all[n] = values[i]
		}
		s, err := config.FromLookup("", lookupOf(all))

		// Which variables fail on their own decides what must be reported.
		var wantBad []string
		for i, n := range names {
			if _, e := config.FromLookup("", lookupOf(map[string]string{n: values[i]})); e != nil {
				wantBad = append(wantBad, n)
			}
		}

		if err == nil {
			if len(wantBad) > 0 {
				t.Fatalf("accepted all, but %v fail alone", wantBad)
			}
			canonical := map[string]string{
				names[0]: strconv.Itoa(s.Retries),
				names[1]: formatSeconds(s.StallTimeout),
				names[2]: strconv.Itoa(s.Concurrent),
				names[3]: s.APIKey,
			}
			back, err := config.FromLookup("", lookupOf(canonical))
			if err != nil {
				t.Fatalf("canonical form %v rejected: %v", canonical, err)
			}
			back.Explicit = s.Explicit
			if back != s || back.APIKey != s.APIKey {
				t.Fatalf("round trip: %#v read back as %#v", s, back)
			}
			for i, n := range names {
				set := strings.TrimSpace(values[i]) != ""
				if got := s.Explicit.Has(varOf(i)); got != set {
					t.Fatalf("%s=%q: Explicit = %v, want %v", n, values[i], got, set)
				}
			}
			if s.Retries < 0 || s.StallTimeout < 0 || s.Concurrent < 1 {
				t.Fatalf("out-of-range settings accepted: %#v", s)
			}
			return
		}

		if s != (config.Settings{}) {
			t.Fatalf("settings on error = %#v, want zero", s)
		}
		if !errors.Is(err, config.ErrConfiguration) {
			t.Fatalf("error %v is not ErrConfiguration", err)
		}
		var got []string
		for _, one := range members(err) {
			var ce *config.ConfigurationError
			if !errors.As(one, &ce) {
				t.Fatalf("reported %T %v, want *ConfigurationError", one, one)
			}
			got = append(got, ce.Variable)
			if !strings.HasPrefix(ce.Error(), ce.Variable) {
				t.Fatalf("message %q does not start with the variable", ce.Error())
			}
			if ce.Variable == names[3] {
				if ce.Value != "" || ce.Error() != "STEADY_API_KEY (value withheld): want a key without control characters" {
					t.Fatalf("key error shows more than it should: %q, Value %q", ce.Error(), ce.Value)
				}
			} else if ce.Value != all[ce.Variable] {
				t.Fatalf("Value = %q, want the value as given %q", ce.Value, all[ce.Variable])
			}
		}
		if strings.Join(got, " ") != strings.Join(wantBad, " ") {
			t.Fatalf("reported %v, want %v", got, wantBad)
		}
	})
}

func varOf(i int) config.Var { return config.Var(1 << i) }

// members lists the errors reported: the joined ones, or err alone.
func members(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

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

package config_test

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/config"
)

// env is a fake environment for FromLookup.
type env map[string]string

func (e env) lookup(name string) (string, bool) {
	v, ok := e[name]
	return v, ok
}

func TestFromLookupValues(t *testing.T) {
	t.Parallel()
	def := config.Defaults()
	cases := []struct {
		name string
		env  env
		want config.Settings
	}{
		{"nothing set", env{}, def},
		{"empty values mean default", env{"STEADY_RETRIES": "", "STEADY_STALL_TIMEOUT": "", "STEADY_CONCURRENT": "", "STEADY_API_KEY": ""}, def},
		{"blank values mean default", env{"STEADY_RETRIES": "  ", "STEADY_CONCURRENT": "\t\n"}, def},
		{"retries", env{"STEADY_RETRIES": "7"}, with(def, func(s *config.Settings) { s.Retries = 7; s.Explicit = config.VarRetries })},
		{"retries zero disables", env{"STEADY_RETRIES": "0"}, with(def, func(s *config.Settings) { s.Retries = 0; s.Explicit = config.VarRetries })},
		{"retries whitespace", env{"STEADY_RETRIES": " 2\n"}, with(def, func(s *config.Settings) { s.Retries = 2; s.Explicit = config.VarRetries })},
		{"retries plus sign and zeros", env{"STEADY_RETRIES": "+007"}, with(def, func(s *config.Settings) { s.Retries = 7; s.Explicit = config.VarRetries })},
		{"stall whole", env{"STEADY_STALL_TIMEOUT": "90"}, with(def, func(s *config.Settings) { s.StallTimeout = 90 * time.Second; s.Explicit = config.VarStallTimeout })},
		{"stall decimal", env{"STEADY_STALL_TIMEOUT": "2.5"}, with(def, func(s *config.Settings) {
			s.StallTimeout = 2500 * time.Millisecond
			s.Explicit = config.VarStallTimeout
		})},
		{"stall leading dot", env{"STEADY_STALL_TIMEOUT": ".25"}, with(def, func(s *config.Settings) { s.StallTimeout = 250 * time.Millisecond; s.Explicit = config.VarStallTimeout })},
		{"stall trailing dot", env{"STEADY_STALL_TIMEOUT": "7."}, with(def, func(s *config.Settings) { s.StallTimeout = 7 * time.Second; s.Explicit = config.VarStallTimeout })},
		{"stall exponent", env{"STEADY_STALL_TIMEOUT": "1e2"}, with(def, func(s *config.Settings) { s.StallTimeout = 100 * time.Second; s.Explicit = config.VarStallTimeout })},
		{"stall zero disables", env{"STEADY_STALL_TIMEOUT": "0"}, with(def, func(s *config.Settings) { s.StallTimeout = 0; s.Explicit = config.VarStallTimeout })},
		{"stall negative zero", env{"STEADY_STALL_TIMEOUT": "-0"}, with(def, func(s *config.Settings) { s.StallTimeout = 0; s.Explicit = config.VarStallTimeout })},
		{"stall nanosecond", env{"STEADY_STALL_TIMEOUT": "0.000000001"}, with(def, func(s *config.Settings) { s.StallTimeout = 1; s.Explicit = config.VarStallTimeout })},
		{"stall rounds half up", env{"STEADY_STALL_TIMEOUT": "0.0000000015"}, with(def, func(s *config.Settings) { s.StallTimeout = 2; s.Explicit = config.VarStallTimeout })},
		{"stall tiny positive is not disabled", env{"STEADY_STALL_TIMEOUT": "0.0000000001"}, with(def, func(s *config.Settings) { s.StallTimeout = 1; s.Explicit = config.VarStallTimeout })},
		{"stall tiny exponent is not disabled", env{"STEADY_STALL_TIMEOUT": "1e-12"}, with(def, func(s *config.Settings) { s.StallTimeout = 1; s.Explicit = config.VarStallTimeout })},
		{"stall largest duration", env{"STEADY_STALL_TIMEOUT": "9223372036.854775807"}, with(def, func(s *config.Settings) { s.StallTimeout = math.MaxInt64; s.Explicit = config.VarStallTimeout })},
		{"stall exact beyond float precision", env{"STEADY_STALL_TIMEOUT": "123456789.123456789"}, with(def, func(s *config.Settings) {
			s.StallTimeout = 123456789*time.Second + 123456789
			s.Explicit = config.VarStallTimeout
		})},
		{"concurrent", env{"STEADY_CONCURRENT": "1"}, with(def, func(s *config.Settings) { s.Concurrent = 1; s.Explicit = config.VarConcurrent })},
		{"api key trimmed", env{"STEADY_API_KEY": "  k-123 \n"}, with(def, func(s *config.Settings) { s.APIKey = "k-123"; s.Explicit = config.VarAPIKey })},
		{"connect timeout", env{"STEADY_CONNECT_TIMEOUT": "2.5"}, with(def, func(s *config.Settings) {
			s.ConnectTimeout = 2500 * time.Millisecond
			s.Explicit = config.VarConnectTimeout
		})},
		{"read timeout zero disables", env{"STEADY_READ_TIMEOUT": "0"}, with(def, func(s *config.Settings) { s.ReadTimeout = 0; s.Explicit = config.VarReadTimeout })},
		{"read timeout", env{"STEADY_READ_TIMEOUT": "10"}, with(def, func(s *config.Settings) { s.ReadTimeout = 10 * time.Second; s.Explicit = config.VarReadTimeout })},
		{"max time", env{"STEADY_MAX_TIME": "300"}, with(def, func(s *config.Settings) { s.MaxTime = 5 * time.Minute; s.Explicit = config.VarMaxTime })},
		{"max retry after", env{"STEADY_MAX_RETRY_AFTER": "7200"}, with(def, func(s *config.Settings) { s.MaxRetryAfter = 2 * time.Hour; s.Explicit = config.VarMaxRetryAfter })},
		{"all", env{"STEADY_RETRIES": "1", "STEADY_STALL_TIMEOUT": "5", "STEADY_CONCURRENT": "4", "STEADY_API_KEY": "k",
			"STEADY_CONNECT_TIMEOUT": "1", "STEADY_READ_TIMEOUT": "2", "STEADY_MAX_TIME": "3", "STEADY_MAX_RETRY_AFTER": "4"}, config.Settings{
			Retries: 1, StallTimeout: 5 * time.Second, Concurrent: 4, APIKey: "k",
			ConnectTimeout: time.Second, ReadTimeout: 2 * time.Second, MaxTime: 3 * time.Second, MaxRetryAfter: 4 * time.Second,
			Explicit: config.VarRetries | config.VarStallTimeout | config.VarConcurrent | config.VarAPIKey |
				config.VarConnectTimeout | config.VarReadTimeout | config.VarMaxTime | config.VarMaxRetryAfter,
		}},
		{"other prefix ignored", env{"OTHER_RETRIES": "9", "steady_retries": "9"}, def},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.FromLookup("", c.env.lookup)
			if err != nil {
				t.Fatalf("FromLookup: %v", err)
			}
			if got != c.want {
				t.Errorf("got %#v, want %#v", got, c.want)
			}
			if got.APIKey != c.want.APIKey { // %#v hides the key; compare it on its own
				t.Errorf("APIKey differs")
			}
		})
	}
}

func with(s config.Settings, f func(*config.Settings)) config.Settings {
	f(&s)
	return s
}

func TestFromLookupErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		env      env
		variable string
		message  string
		numError error // the strconv cause expected, nil when none
		cause    error // a package sentinel expected, nil when none
	}{
		{"retries word", env{"STEADY_RETRIES": "ten"}, "STEADY_RETRIES",
			`STEADY_RETRIES="ten": want a whole number of re-sends, 0 or more (0 disables retry)`, strconv.ErrSyntax, nil},
		{"retries off", env{"STEADY_RETRIES": "off"}, "STEADY_RETRIES",
			`STEADY_RETRIES="off": want a whole number of re-sends, 0 or more (0 disables retry)`, strconv.ErrSyntax, nil},
		{"retries negative", env{"STEADY_RETRIES": "-1"}, "STEADY_RETRIES",
			`STEADY_RETRIES="-1": want a whole number of re-sends, 0 or more (0 disables retry)`, nil, config.ErrOutOfRange},
		{"retries fraction", env{"STEADY_RETRIES": "1.5"}, "STEADY_RETRIES",
			`STEADY_RETRIES="1.5": want a whole number of re-sends, 0 or more (0 disables retry)`, strconv.ErrSyntax, nil},
		{"retries exponent", env{"STEADY_RETRIES": "1e999"}, "STEADY_RETRIES",
			`STEADY_RETRIES="1e999": want a whole number of re-sends, 0 or more (0 disables retry)`, strconv.ErrSyntax, nil},
		{"retries beyond int", env{"STEADY_RETRIES": "99999999999999999999"}, "STEADY_RETRIES",
			`STEADY_RETRIES="99999999999999999999": want a whole number of re-sends, 0 or more (0 disables retry)`, strconv.ErrRange, nil},
		{"retries max int would overflow attempts", env{"STEADY_RETRIES": strconv.Itoa(math.MaxInt)}, "STEADY_RETRIES",
			`STEADY_RETRIES="` + strconv.Itoa(math.MaxInt) + `": want a whole number of re-sends, 0 or more (0 disables retry)`, nil, config.ErrOutOfRange},
		{"retries quoted whitespace kept in message", env{"STEADY_RETRIES": " x "}, "STEADY_RETRIES",
			`STEADY_RETRIES=" x ": want a whole number of re-sends, 0 or more (0 disables retry)`, strconv.ErrSyntax, nil},
		{"stall off", env{"STEADY_STALL_TIMEOUT": "off"}, "STEADY_STALL_TIMEOUT",
			`STEADY_STALL_TIMEOUT="off": want a finite number of seconds, 0 or more, decimals allowed (0 disables the stall budget)`, strconv.ErrSyntax, nil},
		{"stall negative", env{"STEADY_STALL_TIMEOUT": "-1"}, "STEADY_STALL_TIMEOUT",
			`STEADY_STALL_TIMEOUT="-1": want a finite number of seconds, 0 or more, decimals allowed (0 disables the stall budget)`, nil, config.ErrOutOfRange},
		{"stall beyond float", env{"STEADY_STALL_TIMEOUT": "1e999"}, "STEADY_STALL_TIMEOUT",
			`STEADY_STALL_TIMEOUT="1e999": want a finite number of seconds, 0 or more, decimals allowed (0 disables the stall budget)`, strconv.ErrRange, nil},
		{"stall beyond duration", env{"STEADY_STALL_TIMEOUT": "1e10"}, "STEADY_STALL_TIMEOUT",
			`STEADY_STALL_TIMEOUT="1e10": want a finite number of seconds, 0 or more, decimals allowed (0 disables the stall budget)`, nil, config.ErrOutOfRange},
		{"stall one ns beyond duration", env{"STEADY_STALL_TIMEOUT": "9223372036.854775808"}, "STEADY_STALL_TIMEOUT",
			`STEADY_STALL_TIMEOUT="9223372036.854775808": want a finite number of seconds, 0 or more, decimals allowed (0 disables the stall budget)`, nil, config.ErrOutOfRange},
		{"stall NaN", env{"STEADY_STALL_TIMEOUT": "NaN"}, "STEADY_STALL_TIMEOUT",
			`STEADY_STALL_TIMEOUT="NaN": want a finite number of seconds, 0 or more, decimals allowed (0 disables the stall budget)`, nil, config.ErrOutOfRange},
		{"stall Inf", env{"STEADY_STALL_TIMEOUT": "inf"}, "STEADY_STALL_TIMEOUT",
			`STEADY_STALL_TIMEOUT="inf": want a finite number of seconds, 0 or more, decimals allowed (0 disables the stall budget)`, nil, config.ErrOutOfRange},
		{"stall with unit", env{"STEADY_STALL_TIMEOUT": "60s"}, "STEADY_STALL_TIMEOUT",
			`STEADY_STALL_TIMEOUT="60s": want a finite number of seconds, 0 or more, decimals allowed (0 disables the stall budget)`, strconv.ErrSyntax, nil},
		{"concurrent zero", env{"STEADY_CONCURRENT": "0"}, "STEADY_CONCURRENT",
			`STEADY_CONCURRENT="0": want a whole number of requests in flight, 1 or more`, nil, config.ErrOutOfRange},
		{"concurrent word", env{"STEADY_CONCURRENT": "many"}, "STEADY_CONCURRENT",
			`STEADY_CONCURRENT="many": want a whole number of requests in flight, 1 or more`, strconv.ErrSyntax, nil},
		{"long value truncated", env{"STEADY_CONCURRENT": strings.Repeat("x", 1000)}, "STEADY_CONCURRENT",
			`STEADY_CONCURRENT="` + strings.Repeat("x", 64) + `"... (1000 bytes): want a whole number of requests in flight, 1 or more`, strconv.ErrSyntax, nil},
		{"connect timeout zero", env{"STEADY_CONNECT_TIMEOUT": "0"}, "STEADY_CONNECT_TIMEOUT",
			`STEADY_CONNECT_TIMEOUT="0": want a finite number of seconds, more than 0, decimals allowed`, nil, config.ErrOutOfRange},
		{"read timeout word", env{"STEADY_READ_TIMEOUT": "ten"}, "STEADY_READ_TIMEOUT",
			`STEADY_READ_TIMEOUT="ten": want a finite number of seconds, 0 or more, decimals allowed (0 disables the read timeout)`, strconv.ErrSyntax, nil},
		{"max time negative", env{"STEADY_MAX_TIME": "-5"}, "STEADY_MAX_TIME",
			`STEADY_MAX_TIME="-5": want a finite number of seconds, 0 or more, decimals allowed (0 means no limit)`, nil, config.ErrOutOfRange},
		{"max retry after zero", env{"STEADY_MAX_RETRY_AFTER": "0"}, "STEADY_MAX_RETRY_AFTER",
			`STEADY_MAX_RETRY_AFTER="0": want a finite number of seconds, more than 0, decimals allowed`, nil, config.ErrOutOfRange},
		{"api key with newline", env{"STEADY_API_KEY": "abc\ndef"}, "STEADY_API_KEY",
			`STEADY_API_KEY (value withheld): want a key without control characters`, nil, config.ErrControlCharacter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.FromLookup("", c.env.lookup)
			if err == nil {
				t.Fatalf("FromLookup = %v, nil; want an error", got)
			}
			if got != (config.Settings{}) {
				t.Errorf("settings on error = %#v, want the zero value", got)
			}
			if !errors.Is(err, config.ErrConfiguration) {
				t.Errorf("errors.Is(%v, ErrConfiguration) = false", err)
			}
			var ce *config.ConfigurationError
			if !errors.As(err, &ce) {
				t.Fatalf("errors.As(%T, *ConfigurationError) = false", err)
			}
			if ce.Variable != c.variable {
				t.Errorf("Variable = %q, want %q", ce.Variable, c.variable)
			}
			if got := err.Error(); got != c.message {
				t.Errorf("message\n got %s\nwant %s", got, c.message)
			}
			var ne *strconv.NumError
			if gotNum := errors.As(err, &ne); gotNum != (c.numError != nil) {
				t.Errorf("errors.As(*strconv.NumError) = %v, want %v", gotNum, c.numError != nil)
			} else if gotNum && !errors.Is(ne.Err, c.numError) {
				t.Errorf("NumError cause = %v, want %v", ne.Err, c.numError)
			}
			if c.cause != nil && !errors.Is(err, c.cause) {
				t.Errorf("errors.Is(%v, %v) = false", err, c.cause)
			}
		})
	}
}

func TestFromLookupReportsEveryBadVariable(t *testing.T) {
	t.Parallel()
	e := env{
		"APP_RETRIES":       "ten",
		"APP_STALL_TIMEOUT": "5", // good: not reported
		"APP_CONCURRENT":    "-3",
		"APP_API_KEY":       "sk-\x00secret",
	}
	_, err := config.FromLookup("APP", e.lookup)
	if !errors.Is(err, config.ErrConfiguration) {
		t.Fatalf("err = %v, want ErrConfiguration", err)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("err is %T, want a joined error", err)
	}
	var got []string
	for _, one := range joined.Unwrap() {
		var ce *config.ConfigurationError
		if !errors.As(one, &ce) {
			t.Fatalf("member %T is not a *ConfigurationError", one)
		}
		got = append(got, ce.Variable)
	}
	want := []string{"APP_RETRIES", "APP_CONCURRENT", "APP_API_KEY"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("reported %v, want %v", got, want)
	}
	var first *config.ConfigurationError
	if errors.As(err, &first); first == nil || first.Variable != "APP_RETRIES" {
		t.Errorf("errors.As finds %v, want the first bad variable", first)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("message echoes the API key: %s", err)
	}
}

func TestPrefix(t *testing.T) {
	t.Parallel()
	cases := []struct {
		prefix string
		want   string
	}{
		{"", "STEADY_RETRIES"},
		{"STEADY", "STEADY_RETRIES"},
		{"APP", "APP_RETRIES"},
		{"APP_", "APP_RETRIES"},
		{"_", "STEADY_RETRIES"},
	}
	for _, c := range cases {
		if got := config.Name(c.prefix, config.VarRetries); got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.prefix, got, c.want)
		}
		s, err := config.FromLookup(c.prefix, env{c.want: "3"}.lookup)
		if err != nil || s.Retries != 3 {
			t.Errorf("FromLookup(%q) with %s=3: %v, %v; want 3 retries", c.prefix, c.want, s, err)
		}
	}
}

func TestNilLookupGivesDefaults(t *testing.T) {
	t.Parallel()
	got, err := config.FromLookup("", nil)
	if err != nil || got != config.Defaults() {
		t.Errorf("FromLookup(nil) = %v, %v; want defaults", got, err)
	}
}

func TestFromEnv(t *testing.T) {
	// t.Setenv forbids t.Parallel: the process environment is shared.
	t.Setenv("STEADYTEST_RETRIES", "2")
	t.Setenv("STEADYTEST_STALL_TIMEOUT", "0")
	t.Setenv("STEADYTEST_CONCURRENT", "")
	got, err := config.FromEnv("STEADYTEST")
	if err != nil {
		t.Fatal(err)
	}
	want := config.Defaults()
	want.Retries, want.StallTimeout = 2, 0
	want.Explicit = config.VarRetries | config.VarStallTimeout
	if got != want {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestExplicit(t *testing.T) {
	t.Parallel()
	s, err := config.FromLookup("", env{"STEADY_RETRIES": "4", "STEADY_API_KEY": "k"}.lookup)
	if err != nil {
		t.Fatal(err)
	}
	// Set to the default value is still explicit: the user said so.
	if !s.Explicit.Has(config.VarRetries) || s.Explicit.Has(config.VarConcurrent) {
		t.Errorf("Explicit = %v, want RETRIES and API_KEY only", s.Explicit)
	}
	if got, want := s.Explicit.String(), "RETRIES|API_KEY"; got != want {
		t.Errorf("Explicit.String() = %q, want %q", got, want)
	}
}

func TestSetParsesLikeTheVariable(t *testing.T) {
	t.Parallel()
	s := config.Defaults()
	if err := s.Set(config.VarRetries, " 2 "); err != nil || s.Retries != 2 || !s.Explicit.Has(config.VarRetries) {
		t.Fatalf("Set(RETRIES, 2) = %v; settings %v", err, s)
	}
	if err := s.Set(config.VarReadTimeout, "1.5"); err != nil || s.ReadTimeout != 1500*time.Millisecond {
		t.Fatalf("Set(READ_TIMEOUT, 1.5) = %v; settings %v", err, s)
	}
	err := s.Set(config.VarRetries, "ten")
	if err == nil || err.Error() != "want a whole number of re-sends, 0 or more (0 disables retry)" {
		t.Fatalf("Set(RETRIES, ten) = %v", err)
	}
	var ne *strconv.NumError
	if !errors.Is(err, config.ErrConfiguration) || !errors.As(err, &ne) {
		t.Errorf("Set's error does not match ErrConfiguration and its cause: %v", err)
	}
	if s.Retries != 2 {
		t.Errorf("a refused value changed the setting: %d", s.Retries)
	}
	for _, v := range config.Vars() {
		if v == config.VarAPIKey {
			continue
		}
		if err := s.Set(v, ""); err == nil {
			t.Errorf("Set(%s, empty) accepted", v)
		}
	}
}

// A flag (Set) and its variable (FromLookup) accept exactly the same text
// and read it to the same setting, for every variable and every input here.
func TestSetAgreesWithTheVariable(t *testing.T) {
	t.Parallel()
	inputs := []string{"0", "1", " 2 ", "+3", "-1", "1.5", ".25", "7.", "1e3", "1e999", "NaN", "inf", "ten", "60s",
		"9223372036.854775807", "9223372036.854775808", "0.000000001", "1e-12", "-0", "99999999999999999999", "k\x00", "key"}
	for _, v := range config.Vars() {
		for _, in := range inputs {
			name := config.Name("", v)
			fromEnv, envErr := config.FromLookup("", env{name: in}.lookup)
			fromFlag := config.Defaults()
			flagErr := fromFlag.Set(v, in)
			if (envErr == nil) != (flagErr == nil) {
				t.Errorf("%s=%q: variable error %v, flag error %v", name, in, envErr, flagErr)
				continue
			}
			if envErr != nil {
				var ce *config.ConfigurationError
				if errors.As(envErr, &ce) && "want "+ce.Want != flagErr.Error() {
					t.Errorf("%s=%q: variable wants %q, flag says %q", name, in, ce.Want, flagErr)
				}
				continue
			}
			if fromEnv != fromFlag || fromEnv.APIKey != fromFlag.APIKey {
				t.Errorf("%s=%q: variable gives %#v, flag %#v", name, in, fromEnv, fromFlag)
			}
		}
	}
}

package config

import (
	"errors"
	"os"
	"strings"
	"time"
)

// DefaultPrefix is the prefix used when [FromEnv] or [FromLookup] is given
// an empty one.
const DefaultPrefix = "STEADY"

// Defaults, the values a variable that is unset or empty stands for.
const (
	DefaultRetries      = 4
	DefaultStallTimeout = 60 * time.Second
	DefaultConcurrent   = 32
)

// Settings are the values read from the environment. A Settings returned
// by [FromEnv] or [FromLookup] without error is complete: every field holds
// either the value given or its default. The zero Settings is not the
// default one (its Concurrent of 0 is invalid); use [Defaults].
//
// A Settings never shows APIKey when formatted (any fmt verb), logged
// through log/slog, or encoded as JSON.
type Settings struct {
	// Retries is how many times a failed request may be re-sent after its
	// first attempt: a retry policy's MaxAttempts is Retries+1. 0 disables
	// retry (one attempt). It is never negative.
	Retries int

	// StallTimeout is how much silence (time with no data arriving) a call
	// may accumulate before retrying stops. 0 means the stall budget is
	// disabled, not "use the default": a retry policy that reads 0 as its
	// default must be given a negative value instead. It is never negative
	// and never below one nanosecond unless it is 0.
	StallTimeout time.Duration

	// Concurrent is how many requests may be in flight at once; at least 1.
	Concurrent int

	// APIKey is the API key, "" when none was given. It is never printed.
	APIKey string `json:"-"`

	// Explicit records which variables were set to a non-empty value, so a
	// caller can let an explicit setting win over a default of its own
	// while leaving its own default alone when the variable is unset.
	Explicit Var
}

// Defaults returns the settings that apply when no variable is set.
func Defaults() Settings {
	return Settings{
		Retries:      DefaultRetries,
		StallTimeout: DefaultStallTimeout,
		Concurrent:   DefaultConcurrent,
	}
}

// A Var identifies one of the variables config reads. Vars combine as bits
// in [Settings.Explicit].
type Var uint8

// The variables, by the suffix that follows the prefix and an underscore.
const (
	VarRetries      Var = 1 << iota // <PREFIX>_RETRIES
	VarStallTimeout                 // <PREFIX>_STALL_TIMEOUT
	VarConcurrent                   // <PREFIX>_CONCURRENT
	VarAPIKey                       // <PREFIX>_API_KEY
)

// vars lists every Var in the order they are read and reported.
var vars = [...]Var{VarRetries, VarStallTimeout, VarConcurrent, VarAPIKey}

// Suffix returns the part of the variable's name after the prefix and its
// underscore, such as "RETRIES"; "" for a value that is not a single Var.
func (v Var) Suffix() string {
	switch v {
	case VarRetries:
		return "RETRIES"
	case VarStallTimeout:
		return "STALL_TIMEOUT"
	case VarConcurrent:
		return "CONCURRENT"
	case VarAPIKey:
		return "API_KEY"
	}
	return ""
}

// Has reports whether every bit of w is set in v.
func (v Var) Has(w Var) bool { return w != 0 && v&w == w }

// Name returns the full name of variable v under prefix, such as
// "STEADY_RETRIES". An empty prefix means [DefaultPrefix]; one trailing
// underscore on the prefix is ignored, so "APP" and "APP_" name the same
// variables.
func Name(prefix string, v Var) string {
	return normalizePrefix(prefix) + "_" + v.Suffix()
}

func normalizePrefix(prefix string) string {
	prefix = strings.TrimSuffix(prefix, "_")
	if prefix == "" {
		return DefaultPrefix
	}
	return prefix
}

// FromEnv reads the settings from the process environment under prefix
// (empty means [DefaultPrefix]). It is [FromLookup] with [os.LookupEnv].
func FromEnv(prefix string) (Settings, error) {
	return FromLookup(prefix, os.LookupEnv)
}

// FromLookup reads the settings under prefix (empty means [DefaultPrefix])
// through lookup, which reports a variable's value and whether it is set; a
// nil lookup sets nothing, giving [Defaults].
//
// Every variable is read before any error is returned, so one run tells
// the user about every bad value: a single bad variable gives its
// [*ConfigurationError] itself, several give an [errors.Join] of them, in
// the order Retries, StallTimeout, Concurrent, APIKey. In both cases
// errors.As finds a *ConfigurationError (the first), errors.Is finds
// [ErrConfiguration], and the returned Settings is the zero value, so a
// half-read configuration cannot be used by mistake.
func FromLookup(prefix string, lookup func(string) (string, bool)) (Settings, error) {
	s := Defaults()
	var errs []error
	for _, v := range vars {
		name := Name(prefix, v)
		raw, ok := "", false
		if lookup != nil {
			raw, ok = lookup(name)
		}
		value := strings.TrimSpace(raw)
		if !ok || value == "" {
			continue
		}
		if err := s.set(v, value); err != nil {
			errs = append(errs, newError(name, raw, v, err))
			continue
		}
		s.Explicit |= v
	}
	switch len(errs) {
	case 0:
		return s, nil
	case 1:
		return Settings{}, errs[0]
	}
	return Settings{}, errors.Join(errs...)
}

// set parses the trimmed, non-empty value of variable v into s.
func (s *Settings) set(v Var, value string) error {
	var err error
	switch v {
	case VarRetries:
		s.Retries, err = parseRetries(value)
	case VarStallTimeout:
		s.StallTimeout, err = parseSeconds(value)
	case VarConcurrent:
		s.Concurrent, err = parseConcurrent(value)
	case VarAPIKey:
		s.APIKey, err = parseAPIKey(value)
	}
	return err
}

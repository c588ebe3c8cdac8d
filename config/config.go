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

// The defaults, in one table: the values a variable that is unset or empty
// stands for, and the values the library's zero fields mean (a
// retry.Policy, steady.Options, paginate.Options). Every other package
// refers to these; none states a default of its own for the same setting.
const (
	// DefaultRetries is how many times a failed request is re-sent after
	// its first attempt: a retry policy's default MaxAttempts is
	// DefaultRetries+1.
	DefaultRetries = 4
	// DefaultStallTimeout is the no-progress budget of a call.
	DefaultStallTimeout = 60 * time.Second
	// DefaultConcurrent is how many requests of a fan-out are in flight.
	DefaultConcurrent = 32
	// DefaultConnectTimeout bounds dialling and the TLS handshake.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultReadTimeout bounds the wait for a response's headers and each
	// silence inside its body.
	DefaultReadTimeout = 60 * time.Second
	// DefaultMaxRetryAfter is the longest server-named wait slept off.
	DefaultMaxRetryAfter = 60 * time.Second
	// DefaultInitialBackoff is the ceiling of the first backoff, and
	// DefaultMaxBackoff the cap of every backoff.
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	// DefaultMaxBodyBytes bounds, after decompression, a body read whole
	// (a page of a walk, a GetJSON answer).
	DefaultMaxBodyBytes = 64 << 20
	// DefaultPreReadBytes is how much of a response body without a
	// validator the retrying transport reads inside the attempt, so that a
	// body cut within it is re-sent (retry.Policy.PreReadBytes).
	DefaultPreReadBytes = 1 << 20
	// DefaultReplayBytes bounds the request body kept to re-send it, per
	// request, and DefaultReplayTotalBytes what one transport keeps of all
	// its requests at once; past either the request is sent once.
	DefaultReplayBytes      = 1 << 20
	DefaultReplayTotalBytes = 16 << 20
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

	// ConnectTimeout bounds dialling and the TLS handshake of one attempt;
	// more than 0.
	ConnectTimeout time.Duration

	// ReadTimeout bounds one attempt's wait for the response's headers and
	// each silence while its body arrives. 0 means no bound.
	ReadTimeout time.Duration

	// MaxTime bounds a whole command or call, every attempt and wait
	// included; a program applies it as a context deadline. 0 means no
	// bound, which is the default.
	MaxTime time.Duration

	// MaxRetryAfter is the longest server-named wait (Retry-After, a quota
	// reset) slept off; a longer one stops retrying at once. More than 0.
	MaxRetryAfter time.Duration

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

		ConnectTimeout: DefaultConnectTimeout,
		ReadTimeout:    DefaultReadTimeout,
		MaxRetryAfter:  DefaultMaxRetryAfter,
	}
}

// A Var identifies one of the variables config reads. Vars combine as bits
// in [Settings.Explicit].
type Var uint8

// The variables, by the suffix that follows the prefix and an underscore.
const (
	VarRetries        Var = 1 << iota // <PREFIX>_RETRIES
	VarStallTimeout                   // <PREFIX>_STALL_TIMEOUT
	VarConcurrent                     // <PREFIX>_CONCURRENT
	VarAPIKey                         // <PREFIX>_API_KEY
	VarConnectTimeout                 // <PREFIX>_CONNECT_TIMEOUT
	VarReadTimeout                    // <PREFIX>_READ_TIMEOUT
	VarMaxTime                        // <PREFIX>_MAX_TIME
	VarMaxRetryAfter                  // <PREFIX>_MAX_RETRY_AFTER
)

// vars lists every Var in the order they are read and reported.
var vars = [...]Var{VarRetries, VarStallTimeout, VarConcurrent, VarAPIKey,
	VarConnectTimeout, VarReadTimeout, VarMaxTime, VarMaxRetryAfter}

// Vars returns every variable, in the order they are read and reported.
func Vars() []Var { return append([]Var(nil), vars[:]...) }

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
	case VarConnectTimeout:
		return "CONNECT_TIMEOUT"
	case VarReadTimeout:
		return "READ_TIMEOUT"
	case VarMaxTime:
		return "MAX_TIME"
	case VarMaxRetryAfter:
		return "MAX_RETRY_AFTER"
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
// the order Retries, StallTimeout, Concurrent, APIKey, ConnectTimeout,
// ReadTimeout, MaxTime, MaxRetryAfter. In both cases
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

// Set parses value as the variable v is parsed (surrounding whitespace
// ignored; empty is not accepted here) and stores it in s, marking v in
// Explicit. It is for settings given another way than the environment,
// such as command-line flags, so both are read by one parser. The error
// names no variable, since the caller knows what the user typed: its text
// is the accepted form ("want a whole number of re-sends, ..."); it wraps
// the cause, and errors.Is(err, [ErrConfiguration]) holds.
func (s *Settings) Set(v Var, value string) error {
	value = strings.TrimSpace(value)
	c := *s
	err := c.set(v, value)
	if value == "" {
		err = ErrOutOfRange
	}
	if err != nil {
		return &wantError{want: want(v), err: err}
	}
	*s = c
	s.Explicit |= v
	return nil
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
	case VarConnectTimeout:
		s.ConnectTimeout, err = parsePositiveSeconds(value)
	case VarReadTimeout:
		s.ReadTimeout, err = parseSeconds(value)
	case VarMaxTime:
		s.MaxTime, err = parseSeconds(value)
	case VarMaxRetryAfter:
		s.MaxRetryAfter, err = parsePositiveSeconds(value)
	}
	return err
}

package config

import (
	"errors"
	"fmt"
)

// ErrConfiguration is matched by every error that reports a bad setting:
// errors.Is(err, ErrConfiguration) holds for each [*ConfigurationError].
var ErrConfiguration = errors.New("invalid configuration")

// A ConfigurationError reports one variable whose value was not accepted.
// Its message names the variable, quotes the value and states the accepted
// form, for instance
//
//	STEADY_RETRIES="ten": want a whole number of re-sends, 0 or more (0 disables retry)
//
// The value of a secret variable (the API key) is withheld: Value is empty,
// Secret is true, and the message says "(value withheld)" instead.
type ConfigurationError struct {
	Variable string // full name, such as "STEADY_RETRIES"
	Value    string // the value as given, before trimming; "" when Secret
	Want     string // the accepted form, in words
	Secret   bool   // Value was withheld because the variable holds a secret
	// Err is the cause: a *strconv.NumError when the text is not a number of
	// the kind wanted or exceeds what the type holds, [ErrOutOfRange] when
	// it parses but is not accepted, [ErrControlCharacter] for the key.
	Err error
}

// maxQuoted bounds how much of a bad value a message repeats, so a stray
// megabyte in a variable does not become a megabyte of error text.
const maxQuoted = 64

func (e *ConfigurationError) Error() string {
	if e.Secret {
		return fmt.Sprintf("%s (value withheld): want %s", e.Variable, e.Want)
	}
	if len(e.Value) > maxQuoted {
		return fmt.Sprintf("%s=%q... (%d bytes): want %s", e.Variable, e.Value[:maxQuoted], len(e.Value), e.Want)
	}
	return fmt.Sprintf("%s=%q: want %s", e.Variable, e.Value, e.Want)
}

// Unwrap returns the cause, so errors.As reaches a *strconv.NumError.
func (e *ConfigurationError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrConfiguration].
func (e *ConfigurationError) Is(target error) bool { return target == ErrConfiguration }

// want states each variable's accepted form, as the message shows it.
func want(v Var) string {
	switch v {
	case VarRetries:
		return "a whole number of re-sends, 0 or more (0 disables retry)"
	case VarStallTimeout:
		return "a finite number of seconds, 0 or more, decimals allowed (0 disables the stall budget)"
	case VarConcurrent:
		return "a whole number of requests in flight, 1 or more"
	case VarAPIKey:
		return "a key without control characters"
	case VarConnectTimeout:
		return "a finite number of seconds, more than 0, decimals allowed"
	case VarReadTimeout:
		return "a finite number of seconds, 0 or more, decimals allowed (0 disables the read timeout)"
	case VarMaxTime:
		return "a finite number of seconds, 0 or more, decimals allowed (0 means no limit)"
	case VarMaxRetryAfter:
		return "a finite number of seconds, more than 0, decimals allowed"
	}
	return "a valid value"
}

func newError(name, raw string, v Var, cause error) *ConfigurationError {
	e := &ConfigurationError{Variable: name, Value: raw, Want: want(v), Err: cause}
	if v == VarAPIKey {
		e.Value, e.Secret = "", true
	}
	return e
}

// wantError is [Settings.Set]'s error: the accepted form, without a name.
type wantError struct {
	want string
	err  error
}

func (e *wantError) Error() string        { return "want " + e.want }
func (e *wantError) Unwrap() error        { return e.err }
func (e *wantError) Is(target error) bool { return target == ErrConfiguration }

package chunk

import (
	"errors"
	"fmt"
)

// Causes. A [*ValueError] wraps one of the first three; the others come
// wrapped in a message that names the parameter or sizes involved. None of
// the messages quote the base URL, which may carry a credential.
var (
	// ErrValueTooLong: a value does not fit in the budget even alone.
	ErrValueTooLong = errors.New("value does not fit in the URL budget")
	// ErrContainsSeparator: a value contains the separator, so the server
	// would read it as two values.
	ErrContainsSeparator = errors.New("value contains the separator")
	// ErrEmptyValue: a value is empty, which a server reads as no value or
	// drops, and which is nearly always a stray blank line in an input file.
	ErrEmptyValue = errors.New("value is empty")
	// ErrBaseTooLong: the base URL alone, or with the parameter names,
	// exceeds the budget.
	ErrBaseTooLong = errors.New("base URL exceeds the URL budget")
	// ErrParamPresent: the base URL already carries the list parameter.
	ErrParamPresent = errors.New("base URL already has the list parameter")
	// ErrInvalid: the arguments themselves are wrong (nil base, empty
	// parameter name, a separator given together with Repeat).
	ErrInvalid = errors.New("invalid arguments")
)

// A ValueError reports the first value, in input order, that cannot be
// planned. Err is [ErrValueTooLong], [ErrContainsSeparator] or
// [ErrEmptyValue].
type ValueError struct {
	Param string // the list parameter
	Value string // the value as given
	Index int    // its position in the list, 0-based
	// Need and Budget are set for ErrValueTooLong: the length in bytes of
	// the shortest URL that must carry the value, and the budget it exceeds.
	Need, Budget int
	Err          error
}

// maxQuoted bounds how much of a value a message repeats.
const maxQuoted = 64

func (e *ValueError) Error() string {
	v := fmt.Sprintf("%q", e.Value)
	if len(e.Value) > maxQuoted {
		v = fmt.Sprintf("%q... (%d bytes)", e.Value[:maxQuoted], len(e.Value))
	}
	if e.Err == ErrValueTooLong {
		return fmt.Sprintf("chunk: %s value %d %s needs a URL of %d bytes, over the budget of %d",
			e.Param, e.Index, v, e.Need, e.Budget)
	}
	return fmt.Sprintf("chunk: %s value %d %s: %v", e.Param, e.Index, v, e.Err)
}

// Unwrap returns the cause.
func (e *ValueError) Unwrap() error { return e.Err }

package resume

import (
	"errors"
	"fmt"
)

// ErrRefused is the cause when a body broke mid-way and could not be
// continued without risking the bytes of two different answers spliced into
// one. The [*Error] carrying it says why.
var ErrRefused = errors.New("resume refused")

// Error is a broken body that was not continued: the response offered no
// strong validator, or the answer to the Range request did not prove it
// continues the same body. errors.Is(err, ErrRefused) holds, and the
// failure that broke the body is its Unwrap.
type Error struct {
	Method string
	URL    string // redacted
	// Offset is how many bytes of the body the caller received; they are
	// good, the rest is missing.
	Offset int64
	// Reason says what was wrong, server-supplied text quoted.
	Reason string
	// Status is the status of the answer to the Range request, 0 when none
	// was sent.
	Status int
	// Err is the failure that broke the body.
	Err error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s %s: %v at byte %d: %s", e.Method, e.URL, ErrRefused, e.Offset, e.Reason)
	if e.Err != nil {
		s += " (the body broke: " + e.Err.Error() + ")"
	}
	return s
}

// Is reports whether target is [ErrRefused].
func (e *Error) Is(target error) bool { return target == ErrRefused }

// Unwrap returns the failure that broke the body.
func (e *Error) Unwrap() error { return e.Err }

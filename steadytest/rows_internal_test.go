package steadytest

import (
	"strconv"
	"testing"
	"time"
)

// TestHandWrittenFormsMatchTheLibrary checks the hand-written number and
// date forms against strconv and time over every kind of input they meet.
func TestHandWrittenFormsMatchTheLibrary(t *testing.T) {
	for cents := int64(-1_000_000); cents <= 1_000_000; cents++ {
		got := string(appendCents(nil, cents))
		if want := strconv.FormatFloat(float64(cents)/100, 'f', -1, 64); got != want {
			t.Fatalf("appendCents(%d) = %q, want %q", cents, got, want)
		}
	}
	check := func(sec int64) {
		got := string(appendUTC(nil, sec))
		if want := time.Unix(sec, 0).UTC().Format(time.RFC3339); got != want {
			t.Fatalf("appendUTC(%d) = %q, want %q", sec, got, want)
		}
	}
	// Every day from 1970 to 2400 (leap years, centuries, 2100 and 2400),
	// at a moment that exercises each clock field.
	for day := int64(0); day < 157_000; day++ {
		check(day*86400 + day%86400)
	}
	// The last row the server can serve.
	check(epoch.Unix() + MaxRows*int64(rowStep/time.Second))
}

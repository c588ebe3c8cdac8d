package config

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrOutOfRange is the cause when a value parses as a number but lies
// outside the accepted range: a negative count, a concurrency of 0, a
// non-finite number of seconds, or more seconds than a time.Duration holds.
var ErrOutOfRange = errors.New("value out of range")

// ErrControlCharacter is the cause when the API key contains a control
// character. Keys are printable tokens; a newline or NUL inside one is a
// pasting mistake, and net/http would refuse it in a header anyway.
var ErrControlCharacter = errors.New("value contains a control character")

// parseRetries reads a count of re-sends: a whole number from 0 up to
// math.MaxInt-1, so that the attempt count Retries+1 cannot overflow.
func parseRetries(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, err
	}
	if n < 0 || n == math.MaxInt {
		return 0, ErrOutOfRange
	}
	return n, nil
}

// parseConcurrent reads a number of requests in flight: a whole number >= 1.
func parseConcurrent(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, ErrOutOfRange
	}
	return n, nil
}

// maxSeconds is the largest whole number of seconds a time.Duration holds.
const maxSeconds = math.MaxInt64 / int64(1e9)

// parseSeconds reads a finite, non-negative number of seconds in any form
// strconv.ParseFloat accepts, rounded to the nearest nanosecond.
//
// A plain decimal such as "2.5" or "0.000000001" is converted digit by digit,
// so that a duration written with nine decimals reads back exactly; floating
// point would lose nanoseconds above about 10^7 seconds. Other forms ("1e3")
// go through the float. A positive value never becomes 0, which would
// disable the stall budget: anything below half a nanosecond is 1ns.
func parseSeconds(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err // syntax, or beyond float64 ("1e999")
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, ErrOutOfRange
	}
	ns, positive, ok := decimalNanos(s)
	if !ok {
		r := math.Round(f * 1e9)
		if r >= math.MaxInt64 { // float64(MaxInt64) is 2^63, one past the end
			return 0, ErrOutOfRange
		}
		ns, positive = int64(r), f > 0
	}
	if ns < 0 {
		return 0, ErrOutOfRange
	}
	if ns == 0 && positive {
		ns = 1
	}
	return time.Duration(ns), nil
}

// parsePositiveSeconds is parseSeconds for a bound that cannot be disabled:
// 0 is out of range.
func parsePositiveSeconds(s string) (time.Duration, error) {
	d, err := parseSeconds(s)
	if err == nil && d == 0 {
		return 0, ErrOutOfRange
	}
	return d, err
}

// decimalNanos converts a plain decimal ("60", "+2.5", ".25", "7.") to
// nanoseconds, rounding half up at the tenth decimal. ok is false for any
// other form (exponent, hex, sign "-"); ns is -1 when the value is too large
// for a time.Duration. positive reports whether any digit is non-zero.
func decimalNanos(s string) (ns int64, positive, ok bool) {
	if s != "" && s[0] == '+' {
		s = s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || !allDigits(whole) || !allDigits(frac) {
		return 0, false, false
	}
	var sec int64
	for i := 0; i < len(whole); i++ {
		d := int64(whole[i] - '0')
		positive = positive || d != 0
		if sec > (maxSeconds-d)/10 {
			return -1, true, true
		}
		sec = sec*10 + d
	}
	var sub int64 // nanoseconds from the first nine decimals
	for i := 0; i < 9; i++ {
		sub *= 10
		if i < len(frac) {
			sub += int64(frac[i] - '0')
		}
	}
	for i := 0; i < len(frac); i++ {
		positive = positive || frac[i] != '0'
	}
	if len(frac) > 9 && frac[9] >= '5' {
		sub++ // may reach 1e9; the sum below still holds it exactly
	}
	if sec == maxSeconds && sub > math.MaxInt64-maxSeconds*1e9 {
		return -1, true, true
	}
	return sec*1e9 + sub, positive, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseAPIKey accepts any key without control characters. The key is never
// quoted back, so the error carries only the cause.
func parseAPIKey(s string) (string, error) {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return "", ErrControlCharacter
		}
	}
	return s, nil
}

package retry

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter interprets a Retry-After value at time now. It accepts
// delta-seconds, integer or decimal ("120", "42.5"; surrounding white space
// ignored; a negative value means 0) and every HTTP-date form
// [http.ParseTime] accepts. A date in the future gives the time until it; a
// date already past gives no hint, since clock skew is likelier than a server
// meaning "now". Anything else (empty, garbage, inf, nan, exponents) gives no
// hint. A value too large for a Duration saturates at the largest one, so it
// still reads as "longer than any cap".
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	s := strings.TrimSpace(value)
	if s == "" {
		return 0, false
	}
	if isDecimal(s) {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return 0, false
		}
		if secs <= 0 {
			return 0, true
		}
		if secs >= float64(math.MaxInt64)/float64(time.Second) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	t, err := http.ParseTime(s)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0, false
	}
	return d, true
}

// isDecimal reports whether s is an optionally signed decimal number with
// digits before any point: "12", "-3", "42.5". No exponents, no hex, no
// words such as "inf".
func isDecimal(s string) bool {
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	intPart, frac, hasPoint := strings.Cut(s, ".")
	if intPart == "" || !allDigits(intPart) {
		return false
	}
	return !hasPoint || (frac != "" && allDigits(frac))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

package resume

import "strings"

// ParseContentRange parses a Content-Range value (RFC 9110, 14.4) as the
// body layer checks a continuation's: "bytes first-last/total", or
// "bytes */total" (first and last -1), with total -1 for "*". The unit is
// matched without regard to case; the numbers are plain decimals of at most
// 18 digits (no sign, no space), and last is not before first. Any other
// value is not ok. A program that sends its own Range requests (resuming a
// file across runs, as steady get does) checks their answers with it, so
// that both accept the same values.
func ParseContentRange(v string) (first, last, total int64, ok bool) {
	unit, rest, found := strings.Cut(v, " ")
	if !found || !strings.EqualFold(unit, "bytes") {
		return 0, 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, 0, false
	}
	total = -1
	if tot != "*" {
		if total, ok = decimal(tot); !ok {
			return 0, 0, 0, false
		}
	}
	if rng == "*" {
		return -1, -1, total, total >= 0
	}
	a, z, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, 0, false
	}
	if first, ok = decimal(a); !ok {
		return 0, 0, 0, false
	}
	if last, ok = decimal(z); !ok || last < first {
		return 0, 0, 0, false
	}
	return first, last, total, true
}

// openRange parses a Range header of one open-ended range, "bytes=N-".
func openRange(v string) (int64, bool) {
	rest, ok := strings.CutPrefix(v, "bytes=")
	if !ok {
		return 0, false
	}
	n, ok := strings.CutSuffix(rest, "-")
	if !ok {
		return 0, false
	}
	return decimal(n)
}

// decimal parses a non-negative decimal of at most 18 digits, nothing else
// around it, so it cannot overflow.
func decimal(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

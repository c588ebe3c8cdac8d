package retry

// ParseContentRange parses a Content-Range value (RFC 9110, 14.4) as the
// transport checks a continuation's: "bytes first-last/total", or
// "bytes */total" (first and last -1), with total -1 for "*". The unit is
// matched without regard to case; the numbers are plain decimals of at most
// 18 digits (no sign, no space), and last is not before first. Any other
// value is not ok. A program that sends its own Range requests (resuming a
// file across runs, as steady get does) checks their answers with it, so
// that both accept the same values.
func ParseContentRange(v string) (first, last, total int64, ok bool) {
	return parseContentRange(v)
}

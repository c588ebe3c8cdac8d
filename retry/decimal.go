package retry

// decimal parses a non-negative decimal of at most 18 digits, nothing else
// around it, so it cannot overflow. The quota parser reads its numbers with
// it.
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

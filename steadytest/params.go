package steadytest

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// A paramError is a bad query parameter; the client gets 400 with its code
// and message in a JSON body.
type paramError struct {
	code    string // machine-readable, e.g. "invalid_limit"
	message string
}

func (e *paramError) Error() string { return e.message }

// countCap is where parseCount saturates: above any row count or limit.
const countCap = 1_000_000_000

// parseCount parses a non-negative decimal integer the way a strict API
// does: ASCII digits only, no sign, no spaces. Values above countCap
// saturate at it, so a huge limit is clamped and a huge offset is past the
// end rather than an overflow.
func parseCount(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = min(n*10+int(c-'0'), countCap)
	}
	return n, true
}

// parseLimit returns the page size a limit parameter asks for: def when
// absent, clamped to max, an error when it is not a positive integer.
func parseLimit(raw string, present bool, def, max int) (int, error) {
	if !present {
		return def, nil
	}
	n, ok := parseCount(raw)
	if !ok || n == 0 {
		return 0, &paramError{"invalid_limit", fmt.Sprintf("limit must be a whole number from 1 (at most %d are served), got %q", max, truncate(raw))}
	}
	return min(n, max), nil
}

// parseOffset returns the 0-based first row a page starts at.
func parseOffset(raw string, present bool) (int, error) {
	if !present {
		return 0, nil
	}
	n, ok := parseCount(raw)
	if !ok {
		return 0, &paramError{"invalid_offset", fmt.Sprintf("offset must be a whole number from 0, got %q", truncate(raw))}
	}
	return n, nil
}

// cursorPrefix versions the cursor so that its form can change without a
// client's old cursor being misread.
const cursorPrefix = "o1:"

// encodeCursor returns the opaque cursor for the page starting at offset.
func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(offset)))
}

// decodeCursor returns the offset an opaque cursor stands for. Only a
// cursor encodeCursor could have produced is accepted.
func decodeCursor(c string) (int, error) {
	bad := &paramError{"invalid_cursor", fmt.Sprintf("cursor %q was not issued by this server", truncate(c))}
	// Strict: trailing bits must be zero, so each offset has one cursor.
	// Strict or not, the decoder skips CR and LF anywhere in its input, so
	// the cursor must also be what its bytes encode to.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != c {
		return 0, bad
	}
	digits, ok := strings.CutPrefix(string(raw), cursorPrefix)
	if !ok {
		return 0, bad
	}
	n, ok := parseCount(digits)
	if !ok || strconv.Itoa(n) != digits {
		return 0, bad
	}
	return n, nil
}

// parseIDs splits the ids of a lookup: comma-separated, in one or more ids
// parameters, spaces around each id ignored. An empty id is an error, since a
// client that sends one has a bug worth hearing about.
func parseIDs(values []string) ([]string, error) {
	var ids []string
	for _, v := range values {
		for i, id := range strings.Split(v, ",") {
			id = strings.TrimSpace(id)
			if id == "" {
				return nil, &paramError{"invalid_ids", fmt.Sprintf("ids has an empty element at position %d of %q", i+1, truncate(v))}
			}
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, &paramError{"missing_ids", "ids is required: a comma-separated list of row ids"}
	}
	return ids, nil
}

// lookupID returns the row id that id names, if it names one of 1..rows in
// canonical decimal form.
func lookupID(id string, rows int) (int, bool) {
	n, ok := parseCount(id)
	if !ok || n < 1 || n > rows || strconv.Itoa(n) != id {
		return 0, false
	}
	return n, true
}

// truncate shortens s for an error message, so a huge parameter is not
// echoed whole.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

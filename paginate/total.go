package paginate

import (
	"strconv"
	"strings"
)

// defaultTotalField is where OGC API Features and STAC pages announce the
// number of items that match: numberMatched, at the top level.
var defaultTotalField = []string{"numberMatched"}

// announcedTotal reads how many items the page says the whole walk has:
// the JSON number at Options.TotalField when it is set, else the
// X-Total-Count header or a top-level numberMatched. Anything but a whole
// number of zero or more is no announcement (0), so a garbled count cannot
// fail a walk.
func announcedTotal(p *Page, field []string) int64 {
	if field == nil {
		if n, ok := parseCount(strings.TrimSpace(p.Header.Get("X-Total-Count"))); ok {
			return n
		}
		field = defaultTotalField
	}
	s := scanner{data: p.Body, paths: [2][]string{field}, items: -1}
	if s.scan(1) != nil || s.found[0].start < 0 {
		return 0
	}
	n, _ := parseCount(string(p.Body[s.found[0].start:s.found[0].end]))
	return n
}

// parseCount accepts the decimal digits of an int64 of zero or more.
func parseCount(s string) (int64, bool) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}

package paginate

import (
	"strconv"
	"strings"
)

// defaultTotalFields are where pages announce the number of items in their
// body when Options.TotalField names none: numberMatched at the top level
// (OGC API Features, STAC) and a top-level items that is a number
// (json-server 1.x, beside its data array).
var defaultTotalFields = [2][]string{{"numberMatched"}, {"items"}}

// announcedTotal is [announced] with 0 for no announcement.
func announcedTotal(p *Page, field []string) int64 {
	n, _ := announced(p, field)
	return n
}

// announced reads how many items the page says the whole walk has: the
// JSON number at Options.TotalField when it is set; else the X-Total-Count
// header, the total of a Content-Range of items (a-b/total or */total), a
// top-level numberMatched, or a top-level items that is a number, the first
// found. Anything but a whole number of zero or more is no announcement,
// so a garbled count cannot fail a walk.
func announced(p *Page, field []string) (int64, bool) {
	if field == nil {
		if n, ok := parseCount(strings.TrimSpace(p.Header.Get("X-Total-Count"))); ok {
			return n, true
		}
		if _, _, n, ok := contentRange(p.Header.Get("Content-Range")); ok && n >= 0 {
			return n, true
		}
	}
	paths, mask := defaultTotalFields, uint8(3)
	if field != nil {
		paths, mask = [2][]string{field}, 1
	}
	s := scanner{data: p.Body, paths: paths, items: -1}
	if s.scan(mask) != nil {
		return 0, false
	}
	for _, f := range s.found {
		if f.start >= 0 {
			if n, ok := parseCount(string(p.Body[f.start:f.end])); ok {
				return n, true
			}
		}
	}
	return 0, false
}

// parseCount accepts the decimal digits of an int64 of zero or more.
func parseCount(s string) (int64, bool) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}

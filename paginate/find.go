package paginate

import (
	"encoding/json"
	"strings"
)

// findItems finds where a page's items are for [FindItems]: the page itself
// when it is an array, else the first of itemKeys whose top-level member
// is an array, else the first that is null (an empty page, as some APIs
// write one). ok is false with an empty detail when the page is not valid
// JSON (the walk's scan reports that, with the offset), and with a detail
// that says what the page is otherwise. It reads the page with the walk's
// own scanner, copying nothing.
func findItems(body []byte) (path []string, detail string, ok bool) {
	s := scanner{data: body, items: -1}
	s.skipSpace()
	if s.i >= len(s.data) {
		return nil, "", false
	}
	switch s.data[s.i] {
	case '[':
		return []string{}, "", true
	case '{':
	default:
		if s.scan(0) != nil {
			return nil, "", false
		}
		return nil, "the page is neither an array nor an object", false
	}
	var arrays, nulls uint64 // bit i: itemKeys[i] holds an array, or null
	s.i++
	s.depth = 1
	s.skipSpace()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
	} else {
		for {
			if s.eof() || s.data[s.i] != '"' {
				return nil, "", false
			}
			keyStart := s.i
			escaped := s.str()
			if s.err != nil {
				return nil, "", false
			}
			k := candidate(s.data[keyStart:s.i], escaped)
			s.skipSpace()
			if s.eof() || s.data[s.i] != ':' {
				return nil, "", false
			}
			s.i++
			s.skipSpace()
			if s.eof() {
				return nil, "", false
			}
			switch c := s.data[s.i]; {
			case k < 0:
			case c == '[':
				arrays |= 1 << k
			case c == 'n':
				nulls |= 1 << k
			}
			s.value(0, -1)
			if !s.more('}', "object key:value pair") {
				break
			}
		}
	}
	if s.err != nil {
		return nil, "", false
	}
	s.skipSpace()
	if s.i < len(s.data) {
		return nil, "", false // trailing data: the scan says where
	}
	for _, found := range [2]uint64{arrays, nulls} {
		for i, k := range itemKeys {
			if found&(1<<i) != 0 {
				return []string{k}, "", true
			}
		}
	}
	return nil, "found no items: the page is an object without an array at " + strings.Join(itemKeys[:], ", "), false
}

// candidate returns the index in itemKeys of the object key given with
// its quotes, or -1; only a key with escapes is decoded.
func candidate(quoted []byte, escaped bool) int {
	raw := quoted[1 : len(quoted)-1]
	var key string
	if escaped {
		if json.Unmarshal(quoted, &key) != nil {
			return -1
		}
	}
	for i, k := range itemKeys {
		if escaped && key == k || !escaped && string(raw) == k {
			return i
		}
	}
	return -1
}

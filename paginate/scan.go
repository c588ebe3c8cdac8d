package paginate

import (
	"encoding/json"
	"fmt"
)

// maxDepth matches encoding/json's nesting limit, so a page this package
// accepts is one the caller's own json.Unmarshal accepts too.
const maxDepth = 10000

// A syntaxError is where and why a page stopped being valid JSON.
type syntaxError struct {
	offset int64
	msg    string
}

// A span is a value's byte range in the page; start < 0 means not found.
type span struct{ start, end int }

// scanner validates a JSON document in one pass and, on the way, records
// where the values at up to two dotted paths are and, for the items path,
// where each element of its array starts and ends. It decodes nothing and
// copies nothing: every result is a sub-slice of the page, which is what
// lets a walk hand out items at the cost of reading the body once.
//
// Validation follows RFC 8259 as encoding/json applies it: the same
// grammar, the same nesting limit, and, like encoding/json, no check that
// strings are valid UTF-8.
type scanner struct {
	data  []byte
	i     int
	depth int
	paths [2][]string // path k applies when its bit is set in the mask given to scan
	found [2]span
	items int // index of the path whose array elements are collected, or -1
	list  []json.RawMessage
	isArr bool // the items value was an array (or null)
	err   *syntaxError
}

// scan validates s.data and fills found, list and isArr for the paths whose
// bits are set in mask.
func (s *scanner) scan(mask uint8) *syntaxError {
	s.found = [2]span{{-1, -1}, {-1, -1}}
	s.skipSpace()
	s.value(mask, 0)
	if s.err != nil {
		return s.err
	}
	s.skipSpace()
	if s.i < len(s.data) {
		s.fail("invalid character " + quoteChar(s.data[s.i]) + " after top-level value")
		return s.err
	}
	return nil
}

func (s *scanner) fail(msg string) {
	if s.err == nil {
		s.err = &syntaxError{offset: int64(s.i), msg: msg}
	}
}

func (s *scanner) eof() bool {
	if s.i >= len(s.data) {
		s.fail("unexpected end of JSON input")
		return true
	}
	return false
}

func (s *scanner) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value at s.i, which is not whitespace. mask holds the
// paths whose first depth segments named the keys leading here.
func (s *scanner) value(mask uint8, depth int) {
	if s.eof() {
		return
	}
	start := s.i
	var targets uint8 // the paths that end at this value
	for k := range 2 {
		if mask&(1<<k) != 0 && len(s.paths[k]) == depth {
			targets |= 1 << k
		}
	}
	collect := s.items >= 0 && targets&(1<<s.items) != 0
	switch c := s.data[s.i]; c {
	case '{':
		s.object(mask, depth)
	case '[':
		s.array(collect)
	case '"':
		s.str()
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			s.number()
		} else {
			s.fail("invalid character " + quoteChar(c) + " looking for beginning of value")
		}
	}
	if s.err != nil || targets == 0 {
		return
	}
	// A later duplicate key wins, as it does for encoding/json.
	for k := range 2 {
		if targets&(1<<k) != 0 {
			s.found[k] = span{start, s.i}
		}
	}
	if collect {
		c := s.data[start]
		s.isArr = c == '[' || c == 'n'
		if c == 'n' {
			s.list = s.list[:0]
		}
	}
}

func (s *scanner) enter() bool {
	s.depth++
	if s.depth > maxDepth {
		s.fail("exceeded max depth")
		return false
	}
	return true
}

func (s *scanner) object(mask uint8, depth int) {
	if !s.enter() {
		return
	}
	defer func() { s.depth-- }()
	s.i++ // {
	s.skipSpace()
	if s.eof() {
		return
	}
	if s.data[s.i] == '}' {
		s.i++
		return
	}
	for {
		if s.eof() {
			return
		}
		if s.data[s.i] != '"' {
			s.fail("invalid character " + quoteChar(s.data[s.i]) + " looking for beginning of object key string")
			return
		}
		keyStart := s.i
		escaped := s.str()
		if s.err != nil {
			return
		}
		var child uint8
		if mask != 0 {
			child = s.match(mask, depth, s.data[keyStart:s.i], escaped)
		}
		s.skipSpace()
		if s.eof() {
			return
		}
		if s.data[s.i] != ':' {
			s.fail("invalid character " + quoteChar(s.data[s.i]) + " after object key")
			return
		}
		s.i++
		s.skipSpace()
		s.value(child, depth+1)
		if !s.more('}', "object key:value pair") {
			return
		}
	}
}

// more steps past the separator after a member of an object or array and
// reports whether another member follows; it reports false at the closing
// byte, at the end of the data, and after a failure.
func (s *scanner) more(closing byte, member string) bool {
	if s.err != nil {
		return false
	}
	s.skipSpace()
	if s.eof() {
		return false
	}
	switch s.data[s.i] {
	case ',':
		s.i++
		s.skipSpace()
		return true
	case closing:
		s.i++
		return false
	}
	s.fail("invalid character " + quoteChar(s.data[s.i]) + " after " + member)
	return false
}

// match returns the paths of mask whose segment at depth is the key, given
// with its quotes.
func (s *scanner) match(mask uint8, depth int, quoted []byte, escaped bool) uint8 {
	raw := quoted[1 : len(quoted)-1]
	var child uint8
	for k := range 2 {
		if mask&(1<<k) == 0 || len(s.paths[k]) <= depth {
			continue
		}
		seg := s.paths[k][depth]
		if escaped {
			var u string
			if json.Unmarshal(quoted, &u) == nil && u == seg {
				child |= 1 << k
			}
		} else if string(raw) == seg {
			child |= 1 << k
		}
	}
	return child
}

// array scans an array; collect says its elements are the items.
func (s *scanner) array(collect bool) {
	if !s.enter() {
		return
	}
	defer func() { s.depth-- }()
	if collect {
		s.list = s.list[:0]
	}
	s.i++ // [
	s.skipSpace()
	if s.eof() {
		return
	}
	if s.data[s.i] == ']' {
		s.i++
		return
	}
	for {
		start := s.i
		s.value(0, -1)
		if s.err != nil {
			return
		}
		if collect {
			s.list = append(s.list, json.RawMessage(s.data[start:s.i:s.i]))
		}
		if !s.more(']', "array element") {
			return
		}
	}
}

// str scans a string at s.i (on its opening quote) and reports whether it
// holds an escape.
func (s *scanner) str() (escaped bool) {
	s.i++
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return escaped
		case c == '\\':
			escaped = true
			s.i++
			if s.eof() {
				return
			}
			switch s.data[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				s.i++
				for range 4 {
					if s.eof() {
						return
					}
					if !isHex(s.data[s.i]) {
						s.fail("invalid character " + quoteChar(s.data[s.i]) + " in \\u hexadecimal character escape")
						return
					}
					s.i++
				}
			default:
				s.fail("invalid character " + quoteChar(s.data[s.i]) + " in string escape code")
				return
			}
		case c < 0x20:
			s.fail("invalid character " + quoteChar(c) + " in string literal")
			return
		default:
			s.i++
		}
	}
	s.fail("unexpected end of JSON input")
	return
}

func (s *scanner) literal(word string) {
	for j := 0; j < len(word); j++ {
		if s.eof() {
			return
		}
		if s.data[s.i] != word[j] {
			s.fail("invalid character " + quoteChar(s.data[s.i]) + " in literal " + word + " (expecting " + quoteChar(word[j]) + ")")
			return
		}
		s.i++
	}
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() {
	if s.data[s.i] == '-' {
		s.i++
		if s.eof() {
			return
		}
	}
	switch c := s.data[s.i]; {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		s.fail("invalid character " + quoteChar(c) + " in numeric literal")
		return
	}
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if !s.oneDigit("after decimal point in numeric literal") {
			return
		}
		s.digits()
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if !s.oneDigit("in exponent of numeric literal") {
			return
		}
		s.digits()
	}
}

func (s *scanner) oneDigit(where string) bool {
	if s.eof() {
		return false
	}
	if c := s.data[s.i]; c < '0' || c > '9' {
		s.fail("invalid character " + quoteChar(c) + " " + where)
		return false
	}
	return true
}

func (s *scanner) digits() {
	for s.i < len(s.data) && '0' <= s.data[s.i] && s.data[s.i] <= '9' {
		s.i++
	}
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// quoteChar names a byte in an error message.
func quoteChar(c byte) string {
	switch {
	case c == '\'':
		return `'\''`
	case c < 0x20 || c >= 0x7f:
		return fmt.Sprintf(`'\x%02x'`, c)
	}
	return "'" + string(rune(c)) + "'"
}

package paginate

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
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
// where each element of its array starts and whether it is compact. It
// decodes nothing and copies nothing: every result is a position in the
// page, which is what lets a walk hand out items at the cost of reading the
// body once.
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
	list  Items
	isArr bool // the items value was an array (or null)
	// spaces counts the runs of white space skipped, so that an item
	// during which it grew is known not to be compact.
	spaces int
	err    *syntaxError
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
	if s.i < len(s.data) && s.data[s.i] > ' ' {
		return // most tokens follow one another directly
	}
	s.skipSpaces()
}

func (s *scanner) skipSpaces() {
	i := s.i
	for i < len(s.data) && isJSONSpace(s.data[i]) {
		i++
	}
	if i != s.i {
		s.spaces++
		s.i = i
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// value scans one value at s.i, which is not whitespace. mask holds the
// paths whose first depth segments named the keys leading here.
func (s *scanner) value(mask uint8, depth int) {
	if s.eof() {
		return
	}
	if mask == 0 {
		s.plain(0, depth)
		return
	}
	start := s.i
	var targets uint8 // the paths that end at this value
	for k := range 2 {
		if mask&(1<<k) != 0 && len(s.paths[k]) == depth {
			targets |= 1 << k
		}
	}
	if targets == 0 {
		s.plain(mask, depth)
		return
	}
	collect := s.items >= 0 && targets&(1<<s.items) != 0
	if s.data[s.i] == '[' {
		s.array(collect)
	} else {
		s.plain(mask, depth)
	}
	if s.err != nil {
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
			s.list = Items{}
		}
	}
}

// plain scans a value at s.i that is none of the items.
func (s *scanner) plain(mask uint8, depth int) {
	switch c := s.data[s.i]; c {
	case '{':
		s.object(mask, depth)
	case '[':
		s.array(false)
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
	if s.enter() {
		s.members(mask, depth)
	}
	s.depth--
}

// members scans an object's members, from its opening brace.
func (s *scanner) members(mask uint8, depth int) {
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
		if child == 0 && s.i < len(s.data) {
			s.plain(0, depth+1) // what value would do, without its search for paths
		} else {
			s.value(child, depth+1)
		}
		if s.err == nil && s.i < len(s.data) && s.data[s.i] == ',' {
			s.i++ // what more would do, for the usual separator
			s.skipSpace()
			continue
		}
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
	if s.enter() {
		s.elements(collect)
	}
	s.depth--
}

// elements scans an array's elements, from its opening bracket.
func (s *scanner) elements(collect bool) {
	if collect {
		s.startList()
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
		start, spaces := s.i, s.spaces
		if s.eof() {
			return
		}
		s.plain(0, -1)
		if s.err != nil {
			return
		}
		if collect {
			s.add(start, s.spaces != spaces)
		}
		if !s.more(']', "array element") {
			if collect && s.err == nil {
				s.list.close = s.i - 1
			}
			return
		}
	}
}

// startList begins the items anew: a later duplicate key's array replaces
// an earlier one's.
func (s *scanner) startList() {
	starts := s.list.starts
	if starts == nil {
		starts = make([]uint64, len(s.data)/64+1)
	}
	clear(starts)
	s.list = Items{data: s.data, starts: starts, lo: s.i + 1, close: s.i + 1}
}

// add records an item that starts at start.
func (s *scanner) add(start int, loose bool) {
	l := &s.list
	if l.n == 0 {
		l.lo = start
	}
	l.starts[start>>6] |= 1 << (start & 63)
	if loose {
		for len(l.loose) <= l.n>>6 {
			l.loose = append(l.loose, 0)
		}
		l.loose[l.n>>6] |= 1 << (l.n & 63)
	}
	l.n++
}

// str scans a string at s.i (on its opening quote) and reports whether it
// holds an escape.
func (s *scanner) str() (escaped bool) {
	data, i := s.data, s.i+1
	for {
		i = plainRun(data, i)
		if i >= len(data) {
			break
		}
		if data[i] == '"' {
			s.i = i + 1
			return escaped
		}
		s.i = i
		if data[i] != '\\' {
			s.fail("invalid character " + quoteChar(data[i]) + " in string literal")
			return
		}
		escaped = true
		if !s.escape() {
			return
		}
		i = s.i
	}
	s.i = i
	s.fail("unexpected end of JSON input")
	return
}

// escape scans an escape at s.i (on its backslash) and reports whether it
// is valid.
func (s *scanner) escape() bool {
	s.i++
	if s.eof() {
		return false
	}
	switch s.data[s.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i++
	case 'u':
		s.i++
		for range 4 {
			if s.eof() {
				return false
			}
			if !isHex(s.data[s.i]) {
				s.fail("invalid character " + quoteChar(s.data[s.i]) + " in \\u hexadecimal character escape")
				return false
			}
			s.i++
		}
	default:
		s.fail("invalid character " + quoteChar(s.data[s.i]) + " in string escape code")
		return false
	}
	return true
}

// plainRun returns the index of the first byte at or after i that ends a
// run of plain string content (a quote, a backslash, a control character),
// or len(b). It tests eight bytes at a time: strings are most of a page.
func plainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, bs := x^(ones*'"'), x^(ones*'\\')
		// The high bit of a byte is set where it is zero (in q, bs) or
		// below 0x20 (in x); a false mark can only follow a true one, so
		// the lowest mark is exact.
		m := ((q - ones) &^ q) | ((bs - ones) &^ bs) | ((x - ones*0x20) &^ x)
		if m &= highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && !stringStop[b[i]] {
		i++
	}
	return i
}

// stringStop marks the bytes that end a run of plain string content.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

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
	data, i := s.data, s.i
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i]-'1' < 9:
		i = digits(data, i+1)
	default:
		s.i = i
		if !s.eof() {
			s.fail("invalid character " + quoteChar(data[i]) + " in numeric literal")
		}
		return
	}
	if i < len(data) && data[i] == '.' {
		s.i = i + 1
		if !s.oneDigit("after decimal point in numeric literal") {
			return
		}
		i = digits(data, s.i)
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		s.i = i
		if !s.oneDigit("in exponent of numeric literal") {
			return
		}
		i = digits(data, s.i)
	}
	s.i = i
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

// digits returns the index of the first byte at or after i that is not a
// decimal digit.
func digits(b []byte, i int) int {
	for i < len(b) && b[i]-'0' < 10 {
		i++
	}
	return i
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

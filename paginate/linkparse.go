package paginate

import (
	"fmt"
	"strings"
)

// ParseLinkHeader parses the values of every Link header of a response
// (RFC 8288, section 3), in order. A value may hold several links separated
// by commas; commas inside <...> and inside quoted strings do not separate.
// Parameter values may be tokens or quoted strings with backslash escapes.
//
// The header is untrusted input, so parsing never fails: an empty value
// gives no links, a link-value that does not start with < is skipped up to
// the next separating comma, a parameter that does not start with ; ends its
// link, and an unterminated quoted string runs to the end of the value. A
// link without a closing > ends the value.
//
// Time and memory are linear in the length of the values whatever their
// shape: the memory allocated is what the links returned hold, and no more.
func ParseLinkHeader(values []string) []Link {
	links, _ := parseLinks(values)
	return links
}

// A badLink is where a Link header stopped being readable in a way that
// could have hidden a next link. The zero value means nowhere.
type badLink struct {
	what         string // what was wrong; "" for none
	line, offset int    // which header value, and the byte in it
}

func (b badLink) String() string {
	if b.offset < 0 {
		return b.what
	}
	return fmt.Sprintf("%s at byte %d of Link header %d", b.what, b.offset, b.line+1)
}

// parseLinks parses like [ParseLinkHeader] and also reports the first
// malformed link-value that could have been a next link (see
// linkParser.suspect).
//
// It reads the values twice: once counting links and parameters, once
// filling a slice of links and one array of parameters allocated to exactly
// those counts, every link's Params a capped slice of that array. Growing
// slices by appending would allocate several times what they end up
// holding, and a header of nothing but parameters is 16 bytes of
// LinkParam per byte of input.
func parseLinks(values []string) ([]Link, badLink) {
	var count linkParser
	for i, v := range values {
		count.line = i
		count.value(v)
	}
	if count.nLinks == 0 {
		return nil, count.bad
	}
	fill := linkParser{fill: true, links: make([]Link, 0, count.nLinks)}
	if count.nParams > 0 {
		fill.params = make([]LinkParam, 0, count.nParams)
	}
	fill.lower.Grow(count.nLower)
	for _, v := range values {
		fill.value(v)
	}
	return fill.links, count.bad
}

// linkParser reads Link header values, counting what it finds or, when
// fill is set, keeping it.
type linkParser struct {
	fill    bool
	links   []Link
	params  []LinkParam
	nLinks  int
	nParams int
	// nLower counts the bytes of parameter names that need lowering, and
	// lower holds them lowered, one after another.
	nLower int
	lower  strings.Builder
	line   int     // index of the value being read (counting pass)
	bad    badLink // the first suspect found (counting pass)
}

func (p *linkParser) value(s string) {
	i := 0
	for {
		// Separators and whitespace between link-values.
		for i < len(s) && (s[i] == ',' || isSpace(s[i])) {
			i++
		}
		if i >= len(s) {
			return
		}
		if s[i] != '<' {
			end := skipToComma(s, i)
			p.suspect(s, i, end, "a link-value that does not start with '<' mentions next")
			i = end
			continue
		}
		end := strings.IndexByte(s[i+1:], '>')
		if end < 0 {
			// The rest cannot be told apart, and a next link cut short
			// (by a proxy's header limit, say) looks just like this.
			p.suspect(s, i, -1, "a link-value has no closing '>'")
			return
		}
		target := strings.Trim(s[i+1:i+1+end], " \t")
		first := len(p.params)
		var rel string
		var n int
		i, rel, n = p.linkParams(s, i+end+2)
		p.nLinks++
		p.nParams += n
		if p.fill {
			l := Link{Target: target, Rel: rel}
			if n > 0 {
				l.Params = p.params[first:len(p.params):len(p.params)]
			}
			p.links = append(p.links, l)
		}
	}
}

// linkParams reads the parameters of one link-value from i up to the comma
// that ends it. It returns the index after them, the first rel parameter's
// value (filling pass only) and how many named parameters it read.
func (p *linkParser) linkParams(s string, i int) (next int, rel string, n int) {
	haveRel := false
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] == ',' {
			return i, rel, n
		}
		if s[i] != ';' {
			end := skipToComma(s, i)
			p.suspect(s, i, end, "text after a link's target that is not a parameter mentions next")
			return end, rel, n
		}
		i = skipSpace(s, i+1)
		start := i
		for i < len(s) && isTokenChar(s[i]) {
			i++
		}
		name := s[start:i]
		i = skipSpace(s, i)
		var value string
		if i < len(s) && s[i] == '=' {
			value, i = p.paramValue(s, skipSpace(s, i+1))
		}
		if name == "" {
			continue // ";;" or ";=x": nothing to name
		}
		n++
		name = p.lowerName(name)
		if p.fill {
			p.params = append(p.params, LinkParam{Name: name, Value: value})
			if name == "rel" && !haveRel {
				rel, haveRel = value, true
			}
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// a space or a tab.
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// paramValue reads a quoted string or a bare value starting at i and returns
// it with the index after it. A bare value runs to the next ';', ',' or
// whitespace, which also accepts the unquoted media types some servers send.
// A quoted value is found first and only then unescaped, into a string of
// exactly its length; the counting pass does not build it at all.
func (p *linkParser) paramValue(s string, i int) (string, int) {
	if i >= len(s) || s[i] != '"' {
		start := i
		for i < len(s) && s[i] != ';' && s[i] != ',' && !isSpace(s[i]) {
			i++
		}
		return s[start:i], i
	}
	start, escapes := i+1, 0
	j := start
	for ; j < len(s) && s[j] != '"'; j++ {
		if s[j] == '\\' && j+1 < len(s) {
			escapes++
			j++
		}
	}
	next := j + 1
	if j == len(s) {
		next = j
		p.suspect(s, i, j, "a quoted string with no closing quote mentions next")
	}
	if !p.fill || escapes == 0 {
		return s[start:j], next
	}
	return unescape(s[start:j], j-start-escapes), next
}

// unescape removes the backslash of each quoted-pair of q, giving a string
// of n bytes. A lone backslash at the end (of a string cut short) is kept.
func unescape(q string, n int) string {
	var b strings.Builder
	b.Grow(n)
	for i := 0; i < len(q); i++ {
		if q[i] == '\\' && i+1 < len(q) {
			i++
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// suspect records, in the counting pass, a malformed stretch s[from:to] of
// a value (to < 0: an unterminated link-value, which hides whatever it
// held) when it could have been a next link. A stretch whose text is all
// there could only have been one if it mentions "next"; that test keeps a
// stray word from failing a walk whose links are otherwise fine.
func (p *linkParser) suspect(s string, from, to int, what string) {
	if p.fill || p.bad.what != "" {
		return
	}
	if to >= 0 && !containsNext(s[from:to]) {
		return
	}
	p.bad = badLink{what: what, line: p.line, offset: from}
}

// containsNext reports whether s holds "next" in any case.
func containsNext(s string) bool {
	for i := 0; i+4 <= len(s); i++ {
		if s[i]|0x20 == 'n' && s[i+1]|0x20 == 'e' && s[i+2]|0x20 == 'x' && s[i+3]|0x20 == 't' {
			return true
		}
	}
	return false
}

// knownParams are the parameter names of RFC 8288 and its registry, which
// lowerName returns as they are here, whatever their case.
var knownParams = [...]string{"rel", "anchor", "rev", "hreflang", "media", "title", "title*", "type"}

// lowerName returns a parameter name in lower case. Other names with upper
// case are counted in the counting pass and lowered into p.lower in the
// filling pass, each a slice of the one string that holds them all.
func (p *linkParser) lowerName(name string) string {
	upper := false
	for i := 0; i < len(name) && !upper; i++ {
		upper = 'A' <= name[i] && name[i] <= 'Z'
	}
	if !upper {
		return name
	}
	for _, k := range knownParams {
		if len(k) == len(name) && strings.EqualFold(k, name) {
			return k
		}
	}
	if !p.fill {
		p.nLower += len(name)
		return name
	}
	start := p.lower.Len()
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		p.lower.WriteByte(c)
	}
	// Bytes a Builder has written never change, so the slice stays valid
	// as more names are written after it.
	return p.lower.String()[start:]
}

// skipToComma returns the index of the next comma at i or after that is
// outside <...> and outside a quoted string, or len(s).
func skipToComma(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ',':
			return i
		case '<':
			if end := strings.IndexByte(s[i:], '>'); end >= 0 {
				i += end
			} else {
				return len(s)
			}
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		}
		i++
	}
	return len(s)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// isTokenChar reports whether c is an RFC 9110 tchar.
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

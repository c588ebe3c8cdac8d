package paginate

import (
	"strings"
)

// A Link is one link-value of an RFC 8288 Link header.
type Link struct {
	// Target is the URI reference between < and >, as written: it may be
	// relative and has not been checked. Pass it through [Policy.Resolve]
	// before using it.
	Target string
	// Rel is the value of the first rel parameter ("" when there is none):
	// one or more relation types separated by spaces. Later rel parameters
	// are ignored, as RFC 8288 requires, but kept in Params.
	Rel string
	// Params lists every parameter in order, rel included, with names in
	// lower case and quoted values unquoted. A parameter written without a
	// value has an empty Value. Extended values (title*) are kept as written.
	Params []LinkParam
}

// A LinkParam is one parameter of a [Link].
type LinkParam struct {
	Name, Value string
}

// HasRel reports whether rel is one of the link's relation types, ignoring
// case as RFC 8288 requires.
func (l Link) HasRel(rel string) bool {
	return hasToken(l.Rel, rel)
}

// Param returns the value of the first parameter named name (in lower case).
func (l Link) Param(name string) (string, bool) {
	for _, p := range l.Params {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// String formats the link as a Link header value, quoting every parameter
// value, so that parsing the result gives the link back.
func (l Link) String() string {
	var b strings.Builder
	b.WriteByte('<')
	b.WriteString(l.Target)
	b.WriteByte('>')
	for _, p := range l.Params {
		b.WriteString("; ")
		b.WriteString(p.Name)
		b.WriteString(`="`)
		for i := 0; i < len(p.Value); i++ {
			if c := p.Value[i]; c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(p.Value[i])
		}
		b.WriteByte('"')
	}
	return b.String()
}

// hasToken reports whether list, a space-separated list, holds tok in any
// case.
func hasToken(list, tok string) bool {
	for f := range strings.FieldsSeq(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

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
func ParseLinkHeader(values []string) []Link {
	var links []Link
	for _, v := range values {
		links = parseLinkValue(links, v)
	}
	return links
}

func parseLinkValue(links []Link, s string) []Link {
	i := 0
	for {
		// Separators and whitespace between link-values.
		for i < len(s) && (s[i] == ',' || isSpace(s[i])) {
			i++
		}
		if i >= len(s) {
			return links
		}
		if s[i] != '<' {
			i = skipToComma(s, i)
			continue
		}
		end := strings.IndexByte(s[i+1:], '>')
		if end < 0 {
			return links // no closing >: the rest cannot be told apart
		}
		l := Link{Target: strings.Trim(s[i+1:i+1+end], " \t")}
		i += end + 2
		haveRel := false
		for {
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i >= len(s) || s[i] == ',' {
				break
			}
			if s[i] != ';' {
				i = skipToComma(s, i)
				break
			}
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			start := i
			for i < len(s) && isTokenChar(s[i]) {
				i++
			}
			name := strings.ToLower(s[start:i])
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			var value string
			if i < len(s) && s[i] == '=' {
				i++
				for i < len(s) && isSpace(s[i]) {
					i++
				}
				value, i = paramValue(s, i)
			}
			if name == "" {
				continue // ";;" or ";=x": nothing to name
			}
			l.Params = append(l.Params, LinkParam{Name: name, Value: value})
			if name == "rel" && !haveRel {
				l.Rel, haveRel = value, true
			}
		}
		links = append(links, l)
	}
}

// paramValue reads a quoted string or a bare value starting at i and returns
// it with the index after it. A bare value runs to the next ';', ',' or
// whitespace, which also accepts the unquoted media types some servers send.
func paramValue(s string, i int) (string, int) {
	if i < len(s) && s[i] == '"' {
		i++
		var b []byte // allocated only when an escape appears
		start := i
		for i < len(s) {
			switch c := s[i]; c {
			case '"':
				if b == nil {
					return s[start:i], i + 1
				}
				return string(b), i + 1
			case '\\':
				if b == nil {
					b = append(make([]byte, 0, len(s)-start), s[start:i]...)
				}
				if i+1 < len(s) {
					i++
				}
				b = append(b, s[i])
			default:
				if b != nil {
					b = append(b, c)
				}
			}
			i++
		}
		if b == nil {
			return s[start:], i
		}
		return string(b), i
	}
	start := i
	for i < len(s) && s[i] != ';' && s[i] != ',' && !isSpace(s[i]) {
		i++
	}
	return s[start:i], i
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

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

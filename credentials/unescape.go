package credentials

import (
	"cmp"
	"slices"
	"strings"
)

// maxEscapeDepth is how many layers of percent-escapes the by-value check
// takes off: a key escaped once by a server, or twice by a link built from
// an escaped link.
const maxEscapeDepth = 2

// unescapeMapped returns s with its percent-escapes decoded, in either hex
// case, and with '+' as a space when plus is set, as a server would read a
// path, a query or a form; an escape that is not one is kept as written.
// at[i] is where in s the decoded byte i began, and at[len] is len(s).
func unescapeMapped(s string, plus bool) (string, []int) {
	b := make([]byte, 0, len(s))
	at := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		at = append(at, i)
		switch {
		case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 3
		case plus && s[i] == '+':
			b = append(b, ' ')
			i++
		default:
			b = append(b, s[i])
			i++
		}
	}
	return string(b), append(at, len(s))
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// unescapings calls f with every decoding of s the by-value check looks
// at: each escape depth, with and without '+' as a space, and where each
// decoded byte began in s. It stops when f returns false.
func unescapings(s string, f func(d string, at []int) bool) {
	for _, plus := range [...]bool{false, true} {
		d, at := s, []int(nil)
		for range maxEscapeDepth {
			if !strings.ContainsAny(d, "%+") {
				break
			}
			next, nat := unescapeMapped(d, plus)
			if next == d {
				break
			}
			if at != nil {
				for j, k := range nat {
					nat[j] = at[k]
				}
			}
			d, at = next, nat
			if !f(d, at) {
				return
			}
		}
	}
}

// redactEscaped replaces, in s, the escaped text of every secret that
// shows once s is unescaped, keeping the text around it as written.
func redactEscaped(s string, secrets []string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	return replaceEscaped(s, secrets, false, func(int) string { return Redacted })
}

// replaceEscaped replaces, in s, the text of every secret that shows once
// s is unescaped (and, with plain, as written) by with(i), i the secret's
// index, keeping the text around it as written.
func replaceEscaped(s string, secrets []string, plain bool, with func(i int) string) string {
	type span struct{ from, to, secret int }
	var spans []span
	find := func(d string, at []int) bool {
		for k, v := range secrets {
			for i := 0; ; {
				j := strings.Index(d[i:], v)
				if j < 0 {
					break
				}
				from, to := i+j, i+j+len(v)
				if at != nil {
					from, to = at[from], at[to]
				}
				spans = append(spans, span{from, to, k})
				i += j + len(v)
			}
		}
		return true
	}
	if plain {
		find(s, nil)
	}
	unescapings(s, find)
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(b.to, a.to)) })
	var b strings.Builder
	done := 0
	for _, sp := range spans {
		if sp.to <= done {
			continue
		}
		if sp.from >= done {
			b.WriteString(s[done:sp.from])
			b.WriteString(with(sp.secret))
		}
		done = sp.to
	}
	b.WriteString(s[done:])
	return b.String()
}

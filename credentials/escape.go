package credentials

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns server-supplied text with every character that could act
// on a terminal or forge a line written as a Go escape: C0 and C1 control
// characters (ESC, BEL, CR, LF, tab, ...), DEL, the Unicode format
// characters that reorder or hide text (bidirectional overrides, zero-width
// marks) and bytes that are not UTF-8. A reason phrase such as
// "\x1b]0;pwned\x07" reaches an error or event as that text, not as a
// command to the terminal that prints it. Everything else, other scripts
// included, is kept; text that needs no escape is returned as it is.
func Escape(s string) string {
	i := firstToEscape(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case needsEscape(r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether r is a control or format character.
func needsEscape(r rune) bool {
	return r < ' ' || r == 0x7f || (r >= 0x80 && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r))) || r == '\u2028' || r == '\u2029'
}

// firstToEscape returns the index of the first character of s that
// [Escape] changes, or len(s).
func firstToEscape(s string) int {
	for i := 0; i < len(s); {
		if c := s[i]; c >= ' ' && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || needsEscape(r) {
			return i
		}
		i += size
	}
	return len(s)
}

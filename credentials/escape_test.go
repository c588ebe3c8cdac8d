package credentials_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/steadyhttp/steady/credentials"
)

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "404 Not Found", "404 Not Found"},
		{"other scripts kept", "Nicht gefunden – 見つかりません", "Nicht gefunden – 見つかりません"},
		{"terminal title and clear", "\x1b]0;pwned\x07\x1b[2J", `\x1b]0;pwned\a\x1b[2J`},
		{"forged line", "ok\r\nlevel=ERROR msg=forged", `ok\r\nlevel=ERROR msg=forged`},
		{"tab and NUL", "a\tb\x00", `a\tb\x00`},
		{"DEL and C1", "a\x7fb\u0085c\u009b", `a\x7fb\u0085c\u009b`},
		{"bidi override", "invoice\u202egnp.exe", `invoice\u202egnp.exe`},
		{"zero width and line separator", "a\u200bb\u2028c", `a\u200bb\u2028c`},
		{"not UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := credentials.Escape(tt.in); got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzEscape(f *testing.F) {
	f.Add("\x1b]0;pwned\x07\x1b[2J")
	f.Add("a\u202eb\xff")
	f.Fuzz(func(t *testing.T, s string) {
		got := credentials.Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q is not UTF-8", s, got)
		}
		for _, r := range got {
			if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u202e' || r == '\u2028' {
				t.Fatalf("Escape(%q) = %q keeps %U", s, got, r)
			}
		}
		if !strings.ContainsAny(s, "\\") && !strings.Contains(got, `\`) && got != s {
			t.Fatalf("Escape(%q) = %q changed text that needed no escape", s, got)
		}
	})
}

package otelsteady

import (
	"strings"
	"testing"
)

func TestRedactQuotedURLs(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"no URL", "connection reset by peer", "connection reset by peer"},
		{"quoted by net/http", `Get "https://h/x?token=abc&page=2": EOF`, `Get "https://h/x?token=REDACTED&page=2": EOF`},
		{"bare, then text", "lost https://u:pw@h/x?api_key=k1 after 3s", "lost https://REDACTED@h/x?api_key=REDACTED after 3s"},
		{"two URLs", "http://h/a?sig=1 -> http://h/b?sig=2", "http://h/a?sig=REDACTED -> http://h/b?sig=REDACTED"},
		{"upper-case scheme", "HTTPS://h/x?password=p", "https://h/x?password=REDACTED"},
		{"in angle brackets", "<https://h/x?secret=s>", "<https://h/x?secret=REDACTED>"},
		{"unparsable", "at http://h/%zz?token=t", "at (unparsable URL)"},
		{"innocent query kept", "https://h/x?page=2&q=lakes", "https://h/x?page=2&q=lakes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := redactQuotedURLs(c.in); got != c.want {
				t.Errorf("redactQuotedURLs(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// FuzzRedactQuotedURLs: whatever surrounds a URL, the password and the
// credential parameter's value it carries do not survive.
func FuzzRedactQuotedURLs(f *testing.F) {
	f.Add("Get \"", "s3cret", "\": EOF")
	f.Add("", "abc123", "")
	f.Add("lost ", "x", " after 3s (http://other/)")
	f.Add("https://", "k", "?token=")
	f.Fuzz(func(t *testing.T, prefix, secret, suffix string) {
		if len(secret) < 4 || strings.ContainsFunc(secret, func(r rune) bool {
			return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
		}) || strings.Contains(prefix+suffix, secret) {
			t.Skip()
		}
		in := prefix + "https://user:" + secret + "@api.example.gov/x?access_token=" + secret + " " + suffix
		if out := redactQuotedURLs(in); strings.Contains(out, secret) {
			t.Fatalf("redactQuotedURLs(%q) = %q keeps the secret", in, out)
		}
	})
}

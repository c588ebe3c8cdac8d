package resume_test

import (
	"fmt"
	"testing"

	"github.com/steadyhttp/steady/resume"
)

func TestParseContentRange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in                 string
		first, last, total int64
		ok                 bool
	}{
		{"bytes 0-9/10", 0, 9, 10, true},
		{"bytes 5-9/*", 5, 9, -1, true},
		{"bytes */10", -1, -1, 10, true},
		{"BYTES 1-1/2", 1, 1, 2, true},
		{"bytes */*", 0, 0, 0, false},
		{"bytes 9-5/10", 0, 0, 0, false},
		{"bytes -5-9/10", 0, 0, 0, false},
		{"bytes +5-9/10", 0, 0, 0, false},
		{"bytes 5-9/ 10", 0, 0, 0, false},
		{"bytes 5-9", 0, 0, 0, false},
		{"items 5-9/10", 0, 0, 0, false},
		{"bytes 0-9223372036854775807/9223372036854775808", 0, 0, 0, false},
		{"bytes 0-1,3-4/10", 0, 0, 0, false},
		{"", 0, 0, 0, false},
	}
	for _, c := range cases {
		f, l, tot, ok := resume.ParseContentRange(c.in)
		if ok != c.ok || ok && (f != c.first || l != c.last || tot != c.total) {
			t.Errorf("ParseContentRange(%q) = %d, %d, %d, %v; want %d, %d, %d, %v", c.in, f, l, tot, ok, c.first, c.last, c.total, c.ok)
		}
	}
}

// Whatever a server sends, an accepted range is ordered and its numbers are
// what the text says.
func FuzzParseContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-9/10", "bytes */10", "bytes 5-9/*", "bytes 1-0/2", "bytes 99999999999999999999-1/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		first, last, total, ok := resume.ParseContentRange(s)
		if !ok {
			return
		}
		if first == -1 {
			if last != -1 || total < 0 || s[len(s)-len(fmt.Sprint(total)):] != fmt.Sprint(total) {
				t.Fatalf("%q: unsatisfied range parsed as %d/%d", s, last, total)
			}
			return
		}
		if first < 0 || last < first || total < -1 {
			t.Fatalf("%q parsed as %d-%d/%d", s, first, last, total)
		}
	})
}

package chunk_test

import (
	"errors"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/chunk"
)

func mustParse(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func strs(us []*url.URL) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.String()
	}
	return out
}

func TestPlanWith(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		base   string
		param  string
		values []string
		opt    chunk.Options
		want   []string
	}{
		{"empty list keeps base", "https://api.example.org/v1/sites?format=json", "id", nil, chunk.Options{},
			[]string{"https://api.example.org/v1/sites?format=json"}},
		{"all fit in one", "https://h.example/s", "id", []string{"a", "b", "c"}, chunk.Options{},
			[]string{"https://h.example/s?id=a,b,c"}},
		{"existing query kept in order", "https://h.example/s?z=1&a=2", "id", []string{"a"}, chunk.Options{},
			[]string{"https://h.example/s?z=1&a=2&id=a"}},
		{"trailing ampersand not doubled", "https://h.example/s?z=1&", "id", []string{"a"}, chunk.Options{},
			[]string{"https://h.example/s?z=1&id=a"}},
		{"fragment kept", "https://h.example/s#top", "id", []string{"a"}, chunk.Options{},
			[]string{"https://h.example/s?id=a#top"}},
		// "https://h.example/s?id=" is 23 bytes; a value and a comma 2 more each.
		{"exact budget", "https://h.example/s", "id", []string{"a", "b", "c", "d"}, chunk.Options{MaxURLBytes: 26},
			[]string{"https://h.example/s?id=a,b", "https://h.example/s?id=c,d"}},
		{"one byte short", "https://h.example/s", "id", []string{"a", "b", "c", "d"}, chunk.Options{MaxURLBytes: 25},
			[]string{"https://h.example/s?id=a", "https://h.example/s?id=b", "https://h.example/s?id=c", "https://h.example/s?id=d"}},
		{"percent-encoding counted", "https://h.example/s", "q", []string{"a b", "é", "x&y"}, chunk.Options{MaxURLBytes: 32},
			[]string{"https://h.example/s?q=a+b,%C3%A9", "https://h.example/s?q=x%26y"}},
		{"percent-encoding counted, one byte short", "https://h.example/s", "q", []string{"a b", "é", "x&y"}, chunk.Options{MaxURLBytes: 31},
			[]string{"https://h.example/s?q=a+b", "https://h.example/s?q=%C3%A9", "https://h.example/s?q=x%26y"}},
		{"parameter name encoded", "https://h.example/s", "site id", []string{"1"}, chunk.Options{},
			[]string{"https://h.example/s?site+id=1"}},
		{"greedy in order, not sorted", "https://h.example/s", "id", []string{"aaaa", "b", "cccc", "d"}, chunk.Options{MaxURLBytes: 29},
			[]string{"https://h.example/s?id=aaaa,b", "https://h.example/s?id=cccc,d"}},
		{"custom separator literal", "https://h.example/s", "id", []string{"a", "b"}, chunk.Options{Separator: ":"},
			[]string{"https://h.example/s?id=a:b"}},
		{"custom separator escaped", "https://h.example/s", "id", []string{"a", "b"}, chunk.Options{Separator: "|"},
			[]string{"https://h.example/s?id=a%7Cb"}},
		{"separator escaped with its meaning", "https://h.example/s", "id", []string{"a", "b"}, chunk.Options{Separator: "+"},
			[]string{"https://h.example/s?id=a%2Bb"}},
		{"multi-character separator", "https://h.example/s", "id", []string{"a", "b"}, chunk.Options{Separator: ", "},
			[]string{"https://h.example/s?id=a,+b"}},
		{"comma allowed inside values with another separator", "https://h.example/s", "id", []string{"a,1", "b"}, chunk.Options{Separator: ";"},
			[]string{"https://h.example/s?id=a%2C1%3Bb"}},
		{"repeat", "https://h.example/s", "id", []string{"a", "b", "c"}, chunk.Options{Repeat: true, MaxURLBytes: 30},
			[]string{"https://h.example/s?id=a&id=b", "https://h.example/s?id=c"}},
		{"repeat allows commas", "https://h.example/s", "id", []string{"a,b"}, chunk.Options{Repeat: true},
			[]string{"https://h.example/s?id=a%2Cb"}},
		{"negative budget means default", "https://h.example/s", "id", []string{"a", "b"}, chunk.Options{MaxURLBytes: -5},
			[]string{"https://h.example/s?id=a,b"}},
		{"userinfo and port counted and kept", "https://u:p@h.example:8443/s", "id", []string{"a", "b"}, chunk.Options{MaxURLBytes: 33},
			[]string{"https://u:p@h.example:8443/s?id=a", "https://u:p@h.example:8443/s?id=b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := mustParse(t, c.base)
			before := base.String()
			got, err := chunk.PlanWith(base, c.param, c.values, c.opt)
			if err != nil {
				t.Fatalf("PlanWith: %v", err)
			}
			if g, w := strings.Join(strs(got), "\n"), strings.Join(c.want, "\n"); g != w {
				t.Errorf("got\n%s\nwant\n%s", g, w)
			}
			if base.String() != before {
				t.Errorf("base changed to %s", base)
			}
			for _, u := range got {
				if u == base {
					t.Errorf("a planned URL is the caller's base itself")
				}
			}
		})
	}
}

func TestPlanDefaultsToCommaAnd8000(t *testing.T) {
	t.Parallel()
	base := mustParse(t, "https://h.example/s")
	values := make([]string, 2000)
	for i := range values {
		values[i] = strconv.Itoa(10_000_000 + i) // 8 digits: 9 bytes with its comma
	}
	got, err := chunk.Plan(base, "sites", values, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 26 fixed bytes leave room for (7974+1)/9 = 886 values a URL.
	if len(got) != 3 {
		t.Fatalf("got %d URLs, want 3", len(got))
	}
	for _, u := range got {
		if n := len(u.String()); n > chunk.DefaultMaxURLBytes {
			t.Errorf("URL of %d bytes", n)
		}
	}
	if n := len(got[0].String()); n != 26+886*9-1 {
		t.Errorf("first URL is %d bytes, want %d", n, 26+886*9-1)
	}
}

func TestPlanErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		base   string // "" for a nil base
		param  string
		values []string
		opt    chunk.Options
		is     error
		index  int // for a *ValueError
		msg    string
	}{
		{"nil base", "", "id", []string{"a"}, chunk.Options{}, chunk.ErrInvalid, -1,
			"chunk: a base URL and a parameter name are required: invalid arguments"},
		{"empty param", "https://h.example/", "", []string{"a"}, chunk.Options{}, chunk.ErrInvalid, -1,
			"chunk: a base URL and a parameter name are required: invalid arguments"},
		{"separator with repeat", "https://h.example/", "id", []string{"a"}, chunk.Options{Repeat: true, Separator: "|"}, chunk.ErrInvalid, -1,
			`chunk: Separator "|" given with Repeat: invalid arguments`},
		{"separator overlapping itself", "https://h.example/", "id", []string{"a |", "b"}, chunk.Options{Separator: " | "}, chunk.ErrInvalid, -1,
			`chunk: Separator " | " begins the way it ends, so joined values may not split back: invalid arguments`},
		{"param already present", "https://h.example/?id=x&key=secret", "id", []string{"a"}, chunk.Options{}, chunk.ErrParamPresent, -1,
			`chunk: parameter "id": base URL already has the list parameter`},
		{"param present encoded", "https://h.example/?site%20id=x", "site id", []string{"a"}, chunk.Options{}, chunk.ErrParamPresent, -1,
			`chunk: parameter "site id": base URL already has the list parameter`},
		{"param present without value", "https://h.example/?id", "id", nil, chunk.Options{}, chunk.ErrParamPresent, -1,
			`chunk: parameter "id": base URL already has the list parameter`},
		{"base too long", "https://h.example/" + strings.Repeat("p", 100), "id", nil, chunk.Options{MaxURLBytes: 50}, chunk.ErrBaseTooLong, -1,
			"chunk: base URL is 118 bytes, over the budget of 50: base URL exceeds the URL budget"},
		{"value too long", "https://h.example/s", "id", []string{"a", strings.Repeat("b", 10), "c"}, chunk.Options{MaxURLBytes: 30}, chunk.ErrValueTooLong, 1,
			`chunk: id value 1 "bbbbbbbbbb" needs a URL of 33 bytes, over the budget of 30`},
		{"value too long once encoded", "https://h.example/s", "id", []string{"ééé"}, chunk.Options{MaxURLBytes: 30}, chunk.ErrValueTooLong, 0,
			`chunk: id value 0 "ééé" needs a URL of 41 bytes, over the budget of 30`},
		{"value with separator", "https://h.example/s", "id", []string{"a", "b,c"}, chunk.Options{}, chunk.ErrContainsSeparator, 1,
			`chunk: id value 1 "b,c": value contains the separator`},
		{"value with custom separator", "https://h.example/s", "id", []string{"a|b"}, chunk.Options{Separator: "|"}, chunk.ErrContainsSeparator, 0,
			`chunk: id value 0 "a|b": value contains the separator`},
		{"empty value", "https://h.example/s", "id", []string{"a", ""}, chunk.Options{}, chunk.ErrEmptyValue, 1,
			`chunk: id value 1 "": value is empty`},
		{"empty value repeated", "https://h.example/s", "id", []string{""}, chunk.Options{Repeat: true}, chunk.ErrEmptyValue, 0,
			`chunk: id value 0 "": value is empty`},
		{"first bad value reported", "https://h.example/s", "id", []string{"a", "", "b,c"}, chunk.Options{}, chunk.ErrEmptyValue, 1,
			`chunk: id value 1 "": value is empty`},
		{"long value quoted in part", "https://h.example/s", "id", []string{strings.Repeat("x", 100) + ","}, chunk.Options{}, chunk.ErrContainsSeparator, 0,
			`chunk: id value 0 "` + strings.Repeat("x", 64) + `"... (101 bytes): value contains the separator`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var base *url.URL
			if c.base != "" {
				base = mustParse(t, c.base)
			}
			got, err := chunk.PlanWith(base, c.param, c.values, c.opt)
			if err == nil {
				t.Fatalf("PlanWith = %v, nil; want an error", strs(got))
			}
			if got != nil {
				t.Errorf("URLs returned with an error: %v", strs(got))
			}
			if !errors.Is(err, c.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, c.is)
			}
			if err.Error() != c.msg {
				t.Errorf("message\n got %s\nwant %s", err, c.msg)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("message quotes the base URL: %s", err)
			}
			var ve *chunk.ValueError
			if isValue := errors.As(err, &ve); isValue != (c.index >= 0) {
				t.Fatalf("errors.As(*ValueError) = %v, want %v", isValue, c.index >= 0)
			} else if isValue && (ve.Index != c.index || ve.Value != c.values[c.index] || ve.Param != c.param) {
				t.Errorf("ValueError names %s[%d]=%q, want %s[%d]=%q", ve.Param, ve.Index, ve.Value, c.param, c.index, c.values[c.index])
			}
		})
	}
}

// TestPackIsOptimal compares the greedy plan with the fewest URLs found by
// exhaustive dynamic programming over every in-order split.
func TestPackIsOptimal(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	base := mustParse(t, "https://h.example/s?x=1")
	for trial := range 2000 {
		n := 1 + rng.IntN(12)
		values := make([]string, n)
		for i := range values {
			values[i] = strings.Repeat(string(rune('a'+rng.IntN(3))), 1+rng.IntN(6))
			if rng.IntN(4) == 0 {
				values[i] += "/é" // encodes to 9 bytes
			}
		}
		budget := 30 + rng.IntN(40)
		got, err := chunk.Plan(base, "id", values, budget)
		if errors.Is(err, chunk.ErrValueTooLong) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		fits := func(i, j int) bool { // values[i:j] in one URL
			u, err := chunk.Plan(base, "id", values[i:j], 1<<30)
			return err == nil && len(u[0].String()) <= budget
		}
		best := make([]int, n+1) // best[j]: fewest URLs for values[:j]
		for j := 1; j <= n; j++ {
			best[j] = n + 1
			for i := 0; i < j; i++ {
				if best[i]+1 < best[j] && fits(i, j) {
					best[j] = best[i] + 1
				}
			}
		}
		if len(got) != best[n] {
			t.Fatalf("trial %d: %q at budget %d: greedy made %d URLs, fewest is %d", trial, values, budget, len(got), best[n])
		}
	}
}

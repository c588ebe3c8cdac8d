package chunk_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/chunk"
)

func TestPlanMulti(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		base  string
		lists map[string][]string
		opt   chunk.Options
		want  []string
	}{
		{"no lists", "https://h.example/s?x=1", nil, chunk.Options{},
			[]string{"https://h.example/s?x=1"}},
		{"empty lists left out", "https://h.example/s", map[string][]string{"a": nil, "b": {"1"}}, chunk.Options{},
			[]string{"https://h.example/s?b=1"}},
		{"everything fits: names in order", "https://h.example/s?x=1", map[string][]string{"site": {"1", "2"}, "param": {"t", "q"}}, chunk.Options{},
			[]string{"https://h.example/s?x=1&param=t,q&site=1,2"}},
		// "https://h.example/s?a=&b=" is 25 bytes; at 29, 4 bytes of values
		// fit. a (7 bytes) is halved to 1,2|3,4, then ties with b (3 bytes)
		// and, first by name, is halved again; b's x,y then fits beside it.
		{"longest list split first", "https://h.example/s", map[string][]string{"a": {"1", "2", "3", "4"}, "b": {"x", "y"}}, chunk.Options{MaxURLBytes: 29},
			[]string{
				"https://h.example/s?a=1&b=x,y", "https://h.example/s?a=2&b=x,y",
				"https://h.example/s?a=3&b=x,y", "https://h.example/s?a=4&b=x,y",
			}},
		// Halving makes a=1,2|3,4; re-packing greedily beside b=x keeps two
		// parts but fills the first.
		{"re-packed greedily", "https://h.example/s", map[string][]string{"a": {"1", "2", "3", "4"}, "b": {"x"}}, chunk.Options{MaxURLBytes: 31},
			[]string{"https://h.example/s?a=1,2,3&b=x", "https://h.example/s?a=4&b=x"}},
		{"one list is PlanWith", "https://h.example/s", map[string][]string{"a": {"1", "2", "3", "4", "5"}}, chunk.Options{MaxURLBytes: 27},
			[]string{"https://h.example/s?a=1,2,3", "https://h.example/s?a=4,5"}},
		{"repeated parameters", "https://h.example/s", map[string][]string{"a": {"1", "2"}, "b": {"x"}}, chunk.Options{Repeat: true, MaxURLBytes: 30},
			[]string{"https://h.example/s?a=1&b=x", "https://h.example/s?a=2&b=x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := chunk.PlanMulti(mustParse(t, c.base), c.lists, c.opt)
			if err != nil {
				t.Fatalf("PlanMulti: %v", err)
			}
			if g, w := strings.Join(strs(got), "\n"), strings.Join(c.want, "\n"); g != w {
				t.Errorf("got\n%s\nwant\n%s", g, w)
			}
		})
	}
}

func TestPlanMultiErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		base  string
		lists map[string][]string
		opt   chunk.Options
		is    error
		msg   string
	}{
		{"param present", "https://h.example/s?b=0", map[string][]string{"a": {"1"}, "b": {"2"}}, chunk.Options{}, chunk.ErrParamPresent,
			`chunk: parameter "b": base URL already has the list parameter`},
		{"empty name", "https://h.example/s", map[string][]string{"": {"1"}}, chunk.Options{}, chunk.ErrInvalid,
			`chunk: empty parameter name: invalid arguments`},
		{"value with separator", "https://h.example/s", map[string][]string{"a": {"1"}, "b": {"2,3"}}, chunk.Options{}, chunk.ErrContainsSeparator,
			`chunk: b value 0 "2,3": value contains the separator`},
		// 25 fixed bytes, then the longest a (3) and the longest b (4).
		{"longest values together too long", "https://h.example/s", map[string][]string{"a": {"1", "333"}, "b": {"4444", "x"}}, chunk.Options{MaxURLBytes: 31}, chunk.ErrValueTooLong,
			`chunk: b value 0 "4444" needs a URL of 32 bytes, over the budget of 31`},
		{"too many URLs", "https://h.example/s", map[string][]string{"a": numbers(2000), "b": numbers(2000)}, chunk.Options{MaxURLBytes: 40}, chunk.ErrInvalid,
			`chunk: the lists need more than 1048576 URLs in a cross product: invalid arguments`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := chunk.PlanMulti(mustParse(t, c.base), c.lists, c.opt)
			if err == nil || got != nil {
				t.Fatalf("PlanMulti = %d URLs, %v; want only an error", len(got), err)
			}
			if !errors.Is(err, c.is) || err.Error() != c.msg {
				t.Errorf("error %q, want %q (%v)", err, c.msg, c.is)
			}
		})
	}
}

func numbers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(1000 + i)
	}
	return out
}

// checkCrossProduct, for lists of unique values, asserts the PlanMulti properties: every URL within
// budget; each list cut into contiguous parts, in order, that put together
// give the list back; and every combination of parts asked exactly once.
func checkCrossProduct(t *testing.T, base *url.URL, lists map[string][]string, urls []*url.URL, budget int) {
	t.Helper()
	parts := map[string][]string{} // distinct parts, in order of first sight
	seen := map[string]bool{}
	for _, u := range urls {
		if n := len(u.String()); n > budget {
			t.Fatalf("URL of %d bytes over budget %d: %s", n, budget, u)
		}
		q := added(t, u, base)
		var key []string
		for name, list := range lists {
			if len(list) == 0 {
				if q.Has(name) {
					t.Fatalf("empty list %q written", name)
				}
				continue
			}
			part := q.Get(name)
			if !slices.Contains(parts[name], part) {
				parts[name] = append(parts[name], part)
			}
			key = append(key, name+"="+part)
		}
		slices.Sort(key)
		k := strings.Join(key, "&")
		if seen[k] {
			t.Fatalf("combination %s asked twice", k)
		}
		seen[k] = true
	}
	want := 1
	for name, list := range lists {
		if len(list) == 0 {
			continue
		}
		want *= len(parts[name])
		if got := strings.Join(parts[name], ","); got != strings.Join(list, ",") {
			t.Fatalf("%s parts %q do not put back %q", name, parts[name], list)
		}
	}
	if len(urls) != want {
		t.Fatalf("%d URLs for %d combinations", len(urls), want)
	}
}

func TestPlanMultiCrossProduct(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	base := mustParse(t, "https://h.example/s?format=json")
	for range 500 {
		lists := map[string][]string{}
		for _, name := range []string{"site", "param", "year"}[:1+rng.IntN(3)] {
			list := make([]string, rng.IntN(20))
			for i := range list {
				list[i] = strings.Repeat("é", 1+rng.IntN(3)) + fmt.Sprint(i)
			}
			lists[name] = list
		}
		budget := 60 + rng.IntN(120)
		urls, err := chunk.PlanMulti(base, lists, chunk.Options{MaxURLBytes: budget})
		if errors.Is(err, chunk.ErrValueTooLong) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		checkCrossProduct(t, base, lists, urls, budget)
	}
}

// FuzzPlanMulti checks the cross-product properties on two lists.
func FuzzPlanMulti(f *testing.F) {
	f.Add("https://h.example/s", "1\n2\n3\n4", "x\ny", 29)
	f.Add("https://h.example/s?k=v", "ééé\na", "b\nc\nd\ne\nf", 40)
	f.Add("/p", "", "a", 0)
	f.Fuzz(func(t *testing.T, rawBase, a, b string, budget int) {
		base, err := url.Parse(rawBase)
		if err != nil {
			return
		}
		// checkCrossProduct tells parts apart by their text, so make the
		// values unique.
		lists := map[string][]string{"a": splitValues(a), "b": splitValues(b)}
		for _, list := range lists {
			for i := range list {
				list[i] += "." + strconv.Itoa(i)
			}
		}
		urls, err := chunk.PlanMulti(base, lists, chunk.Options{MaxURLBytes: budget})
		if err != nil {
			var ve *chunk.ValueError
			if !errors.As(err, &ve) && !errors.Is(err, chunk.ErrParamPresent) && !errors.Is(err, chunk.ErrBaseTooLong) && !errors.Is(err, chunk.ErrInvalid) {
				t.Fatalf("untyped refusal %T: %v", err, err)
			}
			return
		}
		if budget <= 0 {
			budget = chunk.DefaultMaxURLBytes
		}
		checkCrossProduct(t, base, lists, urls, budget)
	})
}

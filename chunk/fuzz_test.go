package chunk_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/chunk"
)

// fuzzOptions turns fuzz inputs into Options: mode 0 joins with commas,
// 1 repeats the parameter, 2 joins with sep.
func fuzzOptions(mode uint8, sep string, budget int) chunk.Options {
	opt := chunk.Options{MaxURLBytes: budget}
	switch mode % 3 {
	case 1:
		opt.Repeat = true
	case 2:
		opt.Separator = sep
	}
	return opt
}

// splitValues reads the fuzz input's list: newline-separated, "" for none.
func splitValues(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// added returns the parameters a planned URL adds to base, parsed with
// net/url alone; it fails the test unless base's query is kept intact.
func added(t *testing.T, u *url.URL, base *url.URL) url.Values {
	t.Helper()
	parsed, err := url.Parse(u.String())
	if err != nil {
		t.Fatalf("planned URL %q does not parse: %v", u, err)
	}
	if parsed.RawQuery == base.RawQuery {
		return url.Values{} // nothing added
	}
	prefix := base.RawQuery
	if prefix != "" && !strings.HasSuffix(prefix, "&") {
		prefix += "&"
	}
	rest, ok := strings.CutPrefix(parsed.RawQuery, prefix)
	if !ok {
		t.Fatalf("planned query %q does not keep the base query %q", parsed.RawQuery, base.RawQuery)
	}
	q, err := url.ParseQuery(rest)
	if err != nil {
		t.Fatalf("planned parameters %q do not parse: %v", rest, err)
	}
	return q
}

// decode reads back the values one planned URL carries for param: the
// query must be the base's, then param and nothing else.
func decode(t *testing.T, u *url.URL, base *url.URL, param string, opt chunk.Options) []string {
	t.Helper()
	q := added(t, u, base)
	if len(q) != 1 || q[param] == nil {
		t.Fatalf("planned parameters %v: want only %q", q, param)
	}
	if opt.Repeat {
		return q[param]
	}
	if len(q[param]) != 1 {
		t.Fatalf("joined parameter %q appears %d times", param, len(q[param]))
	}
	sep := opt.Separator
	if sep == "" {
		sep = ","
	}
	return strings.Split(q[param][0], sep)
}

// FuzzPlan checks the properties a plan promises: every URL within budget;
// the base's query kept; the values read back in order are exactly the
// input; no URL could take the next URL's first value (so no two adjacent
// URLs could merge, and the count is minimal); and a refusal is typed and
// names a value that truly fails.
func FuzzPlan(f *testing.F) {
	f.Add("https://h.example/s", "id", "a\nb\nc\nd", 26, uint8(0), "")
	f.Add("https://h.example/s?x=1&y=%20", "site id", "a b\né\nx&y\n1,2", 40, uint8(1), "")
	f.Add("https://h.example/s#frag", "id", "a|b\nc\nd", 30, uint8(2), "|")
	f.Add("https://u:p@h.example:8443/s?", "q", "", 10, uint8(0), "")
	f.Add("http://h/?id=1", "id", "a", 100, uint8(0), "")
	f.Add("/relative/path", "ids", "0001\n0002\n0003\n0004\n0005", 0, uint8(2), " + ")
	f.Add("https://h.example/s", "id", "a\nb", 0, uint8(2), ", ")
	f.Add("https://h.example/s", "id", "aaaaaaaaaaaaaaaaaaaa", 25, uint8(0), "")
	f.Add("https://h.example/s", "id", "a\n\nb", 100, uint8(0), "")
	f.Fuzz(func(t *testing.T, rawBase, param, list string, budget int, mode uint8, sep string) {
		base, err := url.Parse(rawBase)
		if err != nil {
			return
		}
		values := splitValues(list)
		opt := fuzzOptions(mode, sep, budget)
		if budget <= 0 {
			budget = chunk.DefaultMaxURLBytes
		}
		before := base.String()
		urls, err := chunk.PlanWith(base, param, values, opt)
		if base.String() != before {
			t.Fatalf("base changed from %q to %q", before, base)
		}
		if err != nil {
			if urls != nil {
				t.Fatalf("URLs returned with error %v", err)
			}
			checkRefusal(t, err, base, param, values, opt, budget)
			return
		}
		if len(values) == 0 {
			if len(urls) != 1 || urls[0].String() != base.String() {
				t.Fatalf("empty list planned as %v, want the base alone", strs(urls))
			}
			return
		}
		var got []string
		var sizes []int
		for _, u := range urls {
			if n := len(u.String()); n > budget {
				t.Fatalf("URL of %d bytes over budget %d: %q", n, budget, u)
			}
			vs := decode(t, u, base, param, opt)
			got = append(got, vs...)
			sizes = append(sizes, len(vs))
		}
		if strings.Join(got, "\x00") != strings.Join(values, "\x00") || len(got) != len(values) {
			t.Fatalf("values read back %q, want %q", got, values)
		}
		start := 0
		for i := 0; i+1 < len(urls); i++ {
			end := start + sizes[i]
			more, err := chunk.PlanWith(base, param, values[start:end+1], chunk.Options{MaxURLBytes: 1 << 40, Separator: opt.Separator, Repeat: opt.Repeat})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(more[0].String()); n <= budget {
				t.Fatalf("URL %d could also carry the next value: %d bytes within %d", i, n, budget)
			}
			start = end
		}
	})
}

// checkRefusal checks that err is typed, and that a value it blames fails
// for the reason given.
func checkRefusal(t *testing.T, err error, base *url.URL, param string, values []string, opt chunk.Options, budget int) {
	t.Helper()
	var ve *chunk.ValueError
	if !errors.As(err, &ve) {
		switch {
		case errors.Is(err, chunk.ErrInvalid):
			if param != "" && !(opt.Repeat && opt.Separator != "") && !selfOverlapping(opt.Separator) {
				t.Fatalf("valid arguments refused: %v", err)
			}
		case errors.Is(err, chunk.ErrBaseTooLong):
			if len(base.String()) <= budget {
				t.Fatalf("base of %d bytes refused as too long for %d", len(base.String()), budget)
			}
		case errors.Is(err, chunk.ErrParamPresent):
			if q, err := url.ParseQuery(base.RawQuery); err == nil && q[param] == nil {
				t.Fatalf("%q refused as present in %q", param, base.RawQuery)
			}
		default:
			t.Fatalf("untyped refusal %T: %v", err, err)
		}
		return
	}
	if ve.Param != param || ve.Index < 0 || ve.Index >= len(values) || ve.Value != values[ve.Index] {
		t.Fatalf("ValueError names %s[%d]=%q, not a value given", ve.Param, ve.Index, ve.Value)
	}
	v := ve.Value
	switch {
	case errors.Is(err, chunk.ErrEmptyValue):
		if v != "" {
			t.Fatalf("%q refused as empty", v)
		}
	case errors.Is(err, chunk.ErrContainsSeparator):
		sep := opt.Separator
		if sep == "" {
			sep = ","
		}
		if opt.Repeat || !strings.Contains(v, sep) {
			t.Fatalf("%q refused for a separator %q it does not contain", v, sep)
		}
	case errors.Is(err, chunk.ErrValueTooLong):
		alone, err := chunk.PlanWith(base, param, []string{v}, chunk.Options{MaxURLBytes: 1 << 40, Separator: opt.Separator, Repeat: opt.Repeat})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(alone[0].String()); n != ve.Need || n <= budget || ve.Budget != budget {
			t.Fatalf("%q alone is %d bytes; error says it needs %d of %d (budget %d)", v, n, ve.Need, ve.Budget, budget)
		}
	default:
		t.Fatalf("ValueError with unknown cause %v", ve.Err)
	}
}

// selfOverlapping restates the separator rule: some proper suffix of sep
// starts it.
func selfOverlapping(sep string) bool {
	for i := 1; i < len(sep); i++ {
		if strings.HasPrefix(sep, sep[i:]) {
			return true
		}
	}
	return false
}

package paginate_test

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

type lp = paginate.LinkParam

func TestParseLinkHeader(t *testing.T) {
	t.Parallel()
	next := func(target string) paginate.Link {
		return paginate.Link{Target: target, Rel: "next", Params: []lp{{"rel", "next"}}}
	}
	cases := []struct {
		name   string
		values []string
		want   []paginate.Link
	}{
		{name: "none", values: nil, want: nil},
		{name: "empty header", values: []string{""}, want: nil},
		{name: "blank header", values: []string{" , ,"}, want: nil},
		{name: "one quoted", values: []string{`<https://api.example.gov/x?page=2>; rel="next"`}, want: []paginate.Link{next("https://api.example.gov/x?page=2")}},
		{name: "one unquoted", values: []string{`</x?page=2>; rel=next`}, want: []paginate.Link{next("/x?page=2")}},
		{name: "no space", values: []string{`</x?page=2>;rel=next`}, want: []paginate.Link{next("/x?page=2")}},
		{name: "spaces around equals", values: []string{`</x> ; rel = "next"`}, want: []paginate.Link{next("/x")}},
		{name: "several in one header", values: []string{`</p1>; rel="first", </p3>; rel="next", </p9>; rel="last"`},
			want: []paginate.Link{
				{Target: "/p1", Rel: "first", Params: []lp{{"rel", "first"}}},
				next("/p3"),
				{Target: "/p9", Rel: "last", Params: []lp{{"rel", "last"}}},
			}},
		{name: "several headers", values: []string{`</p1>; rel="prev"`, `</p3>; rel="next"`},
			want: []paginate.Link{{Target: "/p1", Rel: "prev", Params: []lp{{"rel", "prev"}}}, next("/p3")}},
		{name: "several rel types", values: []string{`</p3>; rel="next last"`},
			want: []paginate.Link{{Target: "/p3", Rel: "next last", Params: []lp{{"rel", "next last"}}}}},
		{name: "first rel wins", values: []string{`</p3>; rel="prev"; rel="next"`},
			want: []paginate.Link{{Target: "/p3", Rel: "prev", Params: []lp{{"rel", "prev"}, {"rel", "next"}}}}},
		{name: "parameter names in any case", values: []string{`</p3>; REL="next"; Type="application/json"`},
			want: []paginate.Link{{Target: "/p3", Rel: "next", Params: []lp{{"rel", "next"}, {"type", "application/json"}}}}},
		{name: "unquoted media type", values: []string{`</p3>; rel=next; type=application/geo+json`},
			want: []paginate.Link{{Target: "/p3", Rel: "next", Params: []lp{{"rel", "next"}, {"type", "application/geo+json"}}}}},
		{name: "comma inside quotes", values: []string{`</p3>; title="a, b; c"; rel="next", </p1>; rel=prev`},
			want: []paginate.Link{
				{Target: "/p3", Rel: "next", Params: []lp{{"title", "a, b; c"}, {"rel", "next"}}},
				{Target: "/p1", Rel: "prev", Params: []lp{{"rel", "prev"}}},
			}},
		{name: "comma inside target", values: []string{`</search?bbox=1,2,3,4&page=2>; rel="next"`}, want: []paginate.Link{next("/search?bbox=1,2,3,4&page=2")}},
		{name: "escaped quote", values: []string{`</p3>; title="say \"hi\" \\o/"; rel=next`},
			want: []paginate.Link{{Target: "/p3", Rel: "next", Params: []lp{{"title", `say "hi" \o/`}, {"rel", "next"}}}}},
		{name: "parameter without value", values: []string{`</p3>; crossorigin; rel=next`},
			want: []paginate.Link{{Target: "/p3", Rel: "next", Params: []lp{{"crossorigin", ""}, {"rel", "next"}}}}},
		{name: "no rel", values: []string{`</p3>`}, want: []paginate.Link{{Target: "/p3"}}},
		{name: "empty target", values: []string{`<>; rel=next`}, want: []paginate.Link{next("")}},
		{name: "extended value kept", values: []string{`</p3>; rel=next; title*=UTF-8'de'n%c3%a4chste`},
			want: []paginate.Link{{Target: "/p3", Rel: "next", Params: []lp{{"rel", "next"}, {"title*", "UTF-8'de'n%c3%a4chste"}}}}},
		{name: "anchor kept", values: []string{`</p3>; rel=next; anchor="#x"`},
			want: []paginate.Link{{Target: "/p3", Rel: "next", Params: []lp{{"rel", "next"}, {"anchor", "#x"}}}}},
		{name: "garbage before a link is skipped", values: []string{`junk; rel=next, </p3>; rel=next`}, want: []paginate.Link{next("/p3")}},
		{name: "garbage with quoted comma", values: []string{`junk "a,b", </p3>; rel=next`}, want: []paginate.Link{next("/p3")}},
		{name: "junk after target ends the link", values: []string{`</p3> junk; rel=prev, </p4>; rel=next`},
			want: []paginate.Link{{Target: "/p3"}, next("/p4")}},
		{name: "unterminated target", values: []string{`</p3; rel=next`}, want: nil},
		{name: "unterminated quote", values: []string{`</p3>; rel="next, </p4>; rel=prev`},
			want: []paginate.Link{{Target: "/p3", Rel: "next, </p4>; rel=prev", Params: []lp{{"rel", "next, </p4>; rel=prev"}}}}},
		{name: "empty parameters", values: []string{`</p3>;; ;rel=next;`}, want: []paginate.Link{next("/p3")}},
		{name: "tab whitespace", values: []string{"</p3>\t;\trel=next"}, want: []paginate.Link{next("/p3")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := paginate.ParseLinkHeader(c.values)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("ParseLinkHeader(%q)\n got  %#v\n want %#v", c.values, got, c.want)
			}
			for _, l := range got {
				again := paginate.ParseLinkHeader([]string{l.String()})
				if len(again) != 1 || !reflect.DeepEqual(again[0], l) {
					t.Errorf("%q does not parse back: %#v", l.String(), again)
				}
			}
		})
	}
}

func TestLinkHasRel(t *testing.T) {
	t.Parallel()
	l := paginate.Link{Rel: "prev  NEXT\tlast"}
	for rel, want := range map[string]bool{"next": true, "Next": true, "last": true, "prev": true, "nex": false, "": false} {
		if got := l.HasRel(rel); got != want {
			t.Errorf("HasRel(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestParseLinkHeaderAllocatesLinearly(t *testing.T) {
	// The bound is what the links returned hold: 56 bytes per Link and 32
	// per LinkParam, so the densest shapes, "<>," and ";a", come to 19 and
	// 16 bytes per byte of header. Anything that grows with the square of
	// the header (an escape buffer as long as the rest of it, say) passes
	// the bound by far at this size.
	const size, perByte = 256 << 10, 24
	for _, unit := range []string{
		`<>,`,
		`<a>;a,`,
		`;a`,
		`;A`,
		`;REL=X`,
		`<a>; t="\"", `,
		`<?page=2>; rel="next"; t="\\", `,
		`; title="a \"quoted\" page"`,
		`"`,
		`<`,
		`x, `,
		`</p> junk, `,
	} {
		h := `<?page=2>; rel="next"` + strings.Repeat(unit, size/len(unit))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		links := paginate.ParseLinkHeader([]string{h})
		runtime.ReadMemStats(&after)
		if len(links) == 0 || links[0].Target != "?page=2" {
			t.Fatalf("%q: the first link was not parsed", unit)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > perByte*uint64(len(h)) {
			t.Errorf("parsing %d KB of %q allocated %d KB; want at most %d bytes per byte of header",
				len(h)>>10, unit, alloc>>10, perByte)
		}
	}
}

func TestParseLinkHeaderParamsDoNotShareCapacity(t *testing.T) {
	t.Parallel()
	// Every link's Params is cut from one array; appending to one link's
	// must not write over the next link's.
	links := paginate.ParseLinkHeader([]string{`</a>; rel=prev, </b>; rel=next`})
	if len(links) != 2 {
		t.Fatalf("%d links", len(links))
	}
	_ = append(links[0].Params, lp{"x", "y"})
	if got := links[1].Params[0]; got != (lp{"rel", "next"}) {
		t.Errorf("appending to the first link's Params changed the second's to %v", got)
	}
}

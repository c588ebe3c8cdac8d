package paginate

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNextJSONLink(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, links, pageType, want string
		err                         error
	}{
		{name: "absent", links: ``},
		{name: "null", links: `null`},
		{name: "empty", links: `[]`},
		{name: "no next", links: `[{"rel":"self","href":"/a"},{"rel":"prev","href":"/p"}]`},
		{name: "plain", links: `[{"rel":"self","href":"/a"},{"rel":"next","href":"/b"}]`, want: "/b"},
		{name: "rel in other case", links: `[{"rel":"Next","href":"/b"}]`, want: "/b"},
		{name: "rel with several types", links: `[{"rel":"next last","href":"/b"}]`, want: "/b"},
		{name: "GET explicit", links: `[{"rel":"next","href":"/b","method":"get"}]`, want: "/b"},
		{name: "page type wins", pageType: "application/geo+json; charset=utf-8",
			links: `[{"rel":"next","type":"application/json","href":"/json"},{"rel":"next","type":"application/geo+json","href":"/geo"}]`, want: "/geo"},
		{name: "json over untyped", links: `[{"rel":"next","href":"/any"},{"rel":"next","type":"application/json","href":"/json"}]`, want: "/json"},
		{name: "untyped over html", links: `[{"rel":"next","type":"text/html","href":"/html"},{"rel":"next","href":"/any"}]`, want: "/any"},
		{name: "first of equals", links: `[{"rel":"next","href":"/1"},{"rel":"next","href":"/2"}]`, want: "/1"},
		{name: "GET beside POST", links: `[{"rel":"next","method":"POST","href":"/p"},{"rel":"next","href":"/g"}]`, want: "/g"},
		{name: "only POST", links: `[{"rel":"next","method":"POST","href":"/search","body":{"page":2}}]`, err: ErrLinkMethod},
		{name: "only html", links: `[{"rel":"next","type":"text/html","href":"/h"}]`, err: ErrBadLink},
		{name: "bad type", links: `[{"rel":"next","type":";;","href":"/h"}]`, err: ErrBadLink},
		{name: "empty href", links: `[{"rel":"next"}]`, err: ErrBadLink},
		{name: "not an array", links: `{"rel":"next"}`, err: ErrBadLink},
		{name: "href not a string", links: `[{"rel":"next","href":5}]`, err: ErrBadLink},
		{name: "null element", links: `[null,{"rel":"next","href":"/b"}]`, want: "/b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var raw json.RawMessage
			if c.links != "" {
				raw = json.RawMessage(c.links)
			}
			got, err := nextJSONLink(raw, c.pageType)
			if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if got != c.want {
				t.Errorf("href = %q, want %q", got, c.want)
			}
		})
	}
}

func TestCursorValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw, want string
		err       bool
	}{
		{``, "", false}, {`null`, "", false}, {`""`, "", false},
		{`"abc"`, "abc", false}, {`"a\u0026b"`, "a&b", false}, {`42`, "42", false}, {`-1.5e3`, "-1.5e3", false},
		{`true`, "", true}, {`{}`, "", true}, {`[1]`, "", true},
	}
	for _, c := range cases {
		got, err := cursorValue(json.RawMessage(c.raw))
		if got != c.want || (err != nil) != c.err || (err != nil && !errors.Is(err, ErrBadCursor)) {
			t.Errorf("cursorValue(%s) = %q, %v; want %q, error %v", c.raw, got, err, c.want, c.err)
		}
	}
}

func TestSetQuery(t *testing.T) {
	t.Parallel()
	cases := []struct{ q, name, value, want string }{
		{"", "cursor", "abc", "cursor=abc"},
		{"limit=10", "cursor", "a b&c", "limit=10&cursor=a+b%26c"},
		{"cursor=old&limit=10&cursor=older", "cursor", "new", "limit=10&cursor=new"},
		{"q=%C3%A9&c%75rsor=x&&", "cursor", "y", "q=%C3%A9&cursor=y"},
		{"cursorx=1", "cursor", "2", "cursorx=1&cursor=2"},
	}
	for _, c := range cases {
		if got := setQuery(c.q, c.name, c.value); got != c.want {
			t.Errorf("setQuery(%q, %q, %q) = %q, want %q", c.q, c.name, c.value, got, c.want)
		}
	}
}

// FuzzJSONLinks feeds whole pages to the scan and link extraction a walk
// runs: nothing panics, every failure has a known cause, and a link chosen
// is a GET link whose rel includes next.
func FuzzJSONLinks(f *testing.F) {
	for _, s := range []string{
		`{"links":[{"rel":"next","href":"/b"}]}`,
		`{"links":[{"rel":"next","type":"text/html","href":"/h"},{"rel":"next","type":"application/geo+json","href":"/g"}]}`,
		`{"links":[{"rel":"next","method":"POST","href":"/s","body":{}}]}`,
		`{"links":{"rel":"next"}}`,
		`{"features":[],"links":null}`,
		`{"l\u0069nks":[{"rel":"next","href":"/esc"}],"links":[]}`,
		`[{"links":[]}]`,
	} {
		f.Add([]byte(s), "application/geo+json")
	}
	f.Fuzz(func(t *testing.T, body []byte, pageType string) {
		s := scanner{data: body, items: -1}
		s.paths[1] = jsonLinks{}.jsonPath()
		if s.scan(2) != nil {
			return
		}
		var raw json.RawMessage
		if f := s.found[1]; f.start >= 0 {
			raw = body[f.start:f.end]
		}
		href, err := nextJSONLink(raw, pageType)
		if err != nil {
			if href != "" || !(errors.Is(err, ErrBadLink) || errors.Is(err, ErrLinkMethod)) {
				t.Fatalf("%q, %v", href, err)
			}
			return
		}
		if href == "" {
			return
		}
		// encoding/json must see the same links member and the chosen link in it.
		var doc map[string]json.RawMessage
		var links []jsonLink
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatalf("chose %q from a page encoding/json rejects: %v", href, err)
		}
		if err := json.Unmarshal(doc["links"], &links); err != nil {
			t.Fatalf("chose %q from links encoding/json rejects: %v", href, err)
		}
		for _, l := range links {
			if l.Href == href && hasToken(l.Rel, "next") && (l.Method == "" || strings.EqualFold(l.Method, "GET")) {
				return
			}
		}
		t.Fatalf("chose %q, which is no GET next link of %s", href, body)
	})
}

package paginate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

func TestLinkHeaderNextLink(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		values []string
		want   string
		bad    bool // ErrBadLink
	}{
		{name: "no header"},
		{name: "no next", values: []string{`</p1>; rel="prev", </p9>; rel=last`}},
		{name: "next", values: []string{`</p1>; rel="prev", </p3>; rel="next"`}, want: "/p3"},
		{name: "next in a later header", values: []string{`</p1>; rel="prev"`, `</p3>; rel="next"`}, want: "/p3"},
		{name: "anchored next skipped", values: []string{`</x>; rel=next; anchor="/y", </p3>; rel=next`}, want: "/p3"},
		{name: "empty target", values: []string{`<>; rel=next`}, bad: true},

		// Cut short, or otherwise malformed where a next link could be.
		{name: "next link cut inside its target", values: []string{`<?page=2; rel="next"`}, bad: true},
		{name: "cut after other links", values: []string{`<https://elsewhere.example/a>; rel="alternate", <?page=2&size=100; rel="next"`}, bad: true},
		{name: "cut before its rel", values: []string{`</p1>; rel=prev, </p3`}, bad: true},
		{name: "unterminated target in a second header", values: []string{`</p1>; rel=prev`, `<?page=2`}, bad: true},
		{name: "missing '>' runs into the next link", values: []string{`<?page=2; rel=next, </p9>; rel=next`}, bad: true},
		{name: "no '<'", values: []string{`?page=2; rel="next"`}, bad: true},
		{name: "junk after the target swallows next", values: []string{`</p3> ; rel=prev junk; rel=next`}, bad: true},
		{name: "unterminated quote swallows next", values: []string{`</p1>; title="page 1, </p3>; rel=next`}, bad: true},
		{name: "unterminated quote in the rel", values: []string{`</p3>; rel="next, </p4>; rel=prev`}, bad: true},

		// Malformed, but a valid next link is there, or nothing could be
		// one.
		{name: "valid next before a cut link", values: []string{`</p3>; rel=next, <?page=`}, want: "/p3"},
		{name: "valid next after a cut header", values: []string{`<?page=2; rel="next"`, `</p3>; rel=next`}, want: "/p3"},
		{name: "valid next after junk", values: []string{`junk; rel=next, </p3>; rel=next`}, want: "/p3"},
		{name: "rel cut inside its quote", values: []string{`</p3>; rel="next`}, want: "/p3"},
		{name: "junk that does not mention next", values: []string{`</p1>; rel=prev, junk "a,b"`}},
		{name: "unterminated quote that does not mention next", values: []string{`</p1>; rel=prev; title="page 1`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := &paginate.Page{Header: http.Header{"Link": c.values}}
			got, err := paginate.LinkHeader.NextLink(p)
			if c.bad {
				if !errors.Is(err, paginate.ErrBadLink) || got != "" {
					t.Fatalf("NextLink = %q, %v; want ErrBadLink", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("NextLink = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestLinkHeaderErrorSaysWhere(t *testing.T) {
	t.Parallel()
	p := &paginate.Page{Header: http.Header{"Link": {`</p1>; rel=prev`, `</a>; rel=alternate, <?page=2&api_key=s3cr3t; rel="next"`}}}
	_, err := paginate.LinkHeader.NextLink(p)
	const want = "malformed next-page link: the Link header has no readable next link, and a link-value has no closing '>' at byte 21 of Link header 2"
	// The header is not quoted: it is server text and may carry a key.
	if err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestWalkTruncatedNextLink(t *testing.T) {
	t.Parallel()
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `</items?page=1>; rel="first", </items?page=2; rel="next"`)
		fmt.Fprint(w, `[{"id":1}]`)
	})
	req, _ := http.NewRequest("GET", srv.URL+"/items", nil)
	w := paginate.NewWalk(srv.client(t), req, paginate.Options{})
	pages, err := collect(w.All(context.Background()))
	var e *paginate.Error
	if len(pages) != 1 || !errors.As(err, &e) || !errors.Is(err, paginate.ErrBadLink) {
		t.Fatalf("%d pages, error %v; want page 1, then ErrBadLink", len(pages), err)
	}
	if e.Page != 1 || e.URL != srv.URL+"/items" || !strings.Contains(err.Error(), "on page 1") {
		t.Errorf("error %q names page %d at %q; want page 1 at %s/items", err, e.Page, e.URL, srv.URL)
	}
	if s := w.Summary(); s.Complete || s.Pages != 1 {
		t.Errorf("summary %+v; want one page, incomplete", s)
	}
	if got := len(srv.requests()); got != 1 {
		t.Errorf("%d requests, want 1", got)
	}
}

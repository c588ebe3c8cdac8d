package paginate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

// Auto and FindItems on each shape of page a walk meets: the strategy and
// the items path are found on the first page and said in the summary, and
// every item of three pages arrives once.
func TestAutoDetectsStrategyAndItems(t *testing.T) {
	t.Parallel()
	type shape struct {
		name      string
		page      func(base string, n int) (header http.Header, body string)
		wantNext  string
		wantItems string
	}
	next := func(base string, n int) string { return fmt.Sprintf("%s/?page=%d", base, n+1) }
	shapes := []shape{
		{"link header, top-level array", func(base string, n int) (http.Header, string) {
			h := http.Header{}
			if n < 3 {
				h.Set("Link", `<`+next(base, n)+`>; rel="next"`)
			}
			return h, itemsJSON(n*10-9, 10)
		}, "link", ""},
		{"json links, features", func(base string, n int) (http.Header, string) {
			links := `[{"rel":"self","href":"x"}]`
			if n < 3 {
				links = `[{"rel":"self","href":"x"},{"rel":"next","href":"` + next(base, n) + `"}]`
			}
			return nil, `{"type":"FeatureCollection","links":` + links + `,"features":` + itemsJSON(n*10-9, 10) + `}`
		}, "json-links", "features"},
		{"link header, data beside other arrays", func(base string, n int) (http.Header, string) {
			h := http.Header{}
			if n < 3 {
				h.Set("Link", `<`+next(base, n)+`>; rel="next"`)
			}
			return h, `{"errors":[],"included":[1,2],"data":` + itemsJSON(n*10-9, 10) + `,"results":"not an array"}`
		}, "link", "data"},
		{"json links, results preferred after items", func(base string, n int) (http.Header, string) {
			links := `[]`
			if n < 3 {
				links = `[{"rel":"next","href":"` + next(base, n) + `"}]`
			}
			return nil, `{"results":` + itemsJSON(n*10-9, 10) + `,"items":{"not":"array"},"links":` + links + `}`
		}, "json-links", "results"},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			var srv *server
			srv = newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				h, body := sh.page(srv.URL, pageNumber(r))
				for k, v := range h {
					w.Header()[k] = v
				}
				fmt.Fprint(w, body)
			})
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
			walk := paginate.NewWalk(srv.client(t), req, paginate.Options{Next: paginate.Auto, Items: paginate.FindItems})
			var got []int
			for p, err := range walk.All(context.Background()) {
				if err != nil {
					t.Fatalf("walk: %v", err)
				}
				if p.Number == 1 {
					d := walk.Summary().Detected
					if d.Next != sh.wantNext || d.Items != sh.wantItems || !d.ItemsFound {
						t.Errorf("after page 1, detected %+v; want next %q, items %q", d, sh.wantNext, sh.wantItems)
					}
				}
				got = append(got, ids(t, p.Items)...)
			}
			if !slices.Equal(got, seqInts(1, 30)) {
				t.Errorf("ids %v, want 1..30", got)
			}
			if s := walk.Summary(); !s.Complete || s.Pages != 3 {
				t.Errorf("summary %+v", s)
			}
		})
	}
}

// What Auto cannot tell apart is an error, never a quiet end; a page with
// no next link of either kind is the only page.
func TestAutoRefusesToGuess(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		header string
		body   string
		err    error
		want   string
	}{
		{"links is an object (JSON:API)", "", `{"data":[{"id":1}],"links":{"next":"/?page=2"}}`, paginate.ErrBadLink, `"links" is not an array`},
		{"Link header cut short", `</?page=2; rel="next"`, `[{"id":1}]`, paginate.ErrBadLink, "Link header"},
		{"no items anywhere", "", `{"entries":[{"id":1}]}`, paginate.ErrNoItems, "without an array at features, items, data, results; set Options.Items"},
		{"a scalar page", "", `"hello"`, paginate.ErrNoItems, "neither an array nor an object"},
		{"not JSON", "", `<html>`, paginate.ErrNotJSON, "not valid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				if c.header != "" {
					w.Header().Set("Link", c.header)
				}
				fmt.Fprint(w, c.body)
			})
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
			_, err := collect(paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{Next: paginate.Auto, Items: paginate.FindItems}))
			if !errors.Is(err, c.err) || !strings.Contains(fmt.Sprint(err), c.want) {
				t.Fatalf("err = %v; want %v naming %q", err, c.err, c.want)
			}
		})
	}
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"items":[{"id":1},{"id":2}]}`) })
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	walk := paginate.NewWalk(srv.client(t), req, paginate.Options{Next: paginate.Auto, Items: paginate.FindItems})
	pages, err := collect(walk.All(context.Background()))
	if err != nil || len(pages) != 1 || pages[0].Items.Len() != 2 {
		t.Fatalf("single page: %d pages, %v", len(pages), err)
	}
	if d := walk.Summary().Detected; d.Next != "" || d.Items != "items" || !walk.Summary().Complete {
		t.Errorf("single page: detected %+v, summary %+v", d, walk.Summary())
	}
}

// The strategy chosen holds: a later page's other kind of link is not
// followed, and the next-link policy applies as to any strategy.
func TestAutoKeepsItsChoiceAndThePolicy(t *testing.T) {
	t.Parallel()
	var srv *server
	srv = newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		switch pageNumber(r) {
		case 1:
			w.Header().Set("Link", `<`+srv.URL+`/?page=2>; rel="next"`)
			fmt.Fprint(w, `[{"id":1}]`)
		case 2:
			// Only a JSON link here: under the Link-header strategy this is
			// the last page, and its body must still hold the items array.
			fmt.Fprint(w, `[{"id":2}]`)
		}
	})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	pages, err := collect(paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{Next: paginate.Auto, Items: paginate.FindItems}))
	if err != nil || len(pages) != 2 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	evil := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"features":[],"links":[{"rel":"next","href":"https://elsewhere.example/?page=2"}]}`)
	})
	req, _ = http.NewRequest(http.MethodGet, evil.URL+"/", nil)
	_, err = collect(paginate.Pages(context.Background(), evil.client(t), req, paginate.Options{Next: paginate.Auto, Items: paginate.FindItems}))
	if !errors.Is(err, paginate.ErrCrossHost) {
		t.Fatalf("a foreign link under Auto: %v, want ErrCrossHost", err)
	}
}

package paginate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

func TestWalkLinkHeader(t *testing.T) {
	t.Parallel()
	const per, last = 3, 4
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		n := pageNumber(r)
		links := []string{`</items?page=1>; rel="first"`}
		if n < last {
			// Relative, in one header with other links, rel with two types.
			links = append(links, fmt.Sprintf(`<items?page=%d&bbox=1,2,3,4>; title="next, please"; rel="next nofollow"`, n+1))
		}
		w.Header().Set("Link", strings.Join(links, ", "))
		if n > 1 {
			w.Header().Add("Link", fmt.Sprintf(`</items?page=%d>; rel=prev`, n-1))
		}
		fmt.Fprint(w, itemsJSON((n-1)*per+1, per))
	})
	req, _ := http.NewRequest("GET", srv.URL+"/items", nil)
	w := paginate.NewWalk(srv.client(t), req, paginate.Options{})
	pages, err := collect(w.All(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for i, p := range pages {
		if p.Number != i+1 || p.Status != 200 {
			t.Errorf("page %d: Number %d Status %d", i, p.Number, p.Status)
		}
		got = append(got, ids(t, p.Items)...)
	}
	if want := seqInts(1, per*last); !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	if want := []string{"/items", "/items?page=2&bbox=1,2,3,4", "/items?page=3&bbox=1,2,3,4", "/items?page=4&bbox=1,2,3,4"}; !reflect.DeepEqual(srv.requests(), want) {
		t.Errorf("requests = %q, want %q", srv.requests(), want)
	}
	s := w.Summary()
	var bytes int64
	for _, p := range pages {
		bytes += int64(len(p.Body))
	}
	if s.Pages != last || s.Items != per*last || s.Bytes != bytes || !s.Complete || s.Next != nil || s.Trimmed != 0 {
		t.Errorf("summary = %+v", s)
	}
	if pages[last-1].Next != nil || pages[0].Next == nil || pages[0].Next.String() != srv.URL+"/items?page=2&bbox=1,2,3,4" {
		t.Errorf("Page.Next: first %v, last %v", pages[0].Next, pages[last-1].Next)
	}
}

func TestWalkLinkHeaderIgnoresAnchoredNext(t *testing.T) {
	t.Parallel()
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if pageNumber(r) == 1 {
			w.Header().Add("Link", `</other?page=2>; rel=next; anchor="/other"`)
			w.Header().Add("Link", `</items?page=2>; rel=next`)
		}
		fmt.Fprint(w, `[]`)
	})
	req, _ := http.NewRequest("GET", srv.URL+"/items", nil)
	if _, err := collect(paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{})); err != nil {
		t.Fatal(err)
	}
	if got, want := srv.requests(), []string{"/items", "/items?page=2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("requests = %q, want %q", got, want)
	}
}

func TestWalkJSONLinks(t *testing.T) {
	t.Parallel()
	const per, last = 2, 3
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		n := pageNumber(r)
		links := []string{
			fmt.Sprintf(`{"rel":"self","href":"/collections/c/items?page=%d"}`, n),
			`{"rel":"alternate","type":"text/html","href":"/collections/c/items?f=html"}`,
		}
		if n < last {
			links = append(links,
				fmt.Sprintf(`{"rel":"next","type":"text/html","href":"/collections/c/items?page=%d&f=html"}`, n+1),
				fmt.Sprintf(`{"rel":"next","type":"application/geo+json","title":"Next page","href":"items?page=%d"}`, n+1))
		}
		w.Header().Set("Content-Type", "application/geo+json")
		fmt.Fprintf(w, `{"type":"FeatureCollection","features":%s,"links":[%s],"numberReturned":%d}`,
			itemsJSON((n-1)*per+1, per), strings.Join(links, ","), per)
	})
	req, _ := http.NewRequest("GET", srv.URL+"/collections/c/items", nil)
	pages, err := collect(paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{Next: paginate.JSONLinks, Items: "features"}))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, p := range pages {
		got = append(got, ids(t, p.Items)...)
	}
	if want := seqInts(1, per*last); !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	if want := []string{"/collections/c/items", "/collections/c/items?page=2", "/collections/c/items?page=3"}; !reflect.DeepEqual(srv.requests(), want) {
		t.Errorf("requests = %q, want %q", srv.requests(), want)
	}
}

func TestWalkJSONLinksRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, links string
		err         error
	}{
		{"post", `[{"rel":"next","href":"/search","method":"POST","body":{"token":"x"}}]`, paginate.ErrLinkMethod},
		{"only html", `[{"rel":"next","type":"text/html","href":"/items?page=2&f=html"}]`, paginate.ErrBadLink},
		{"empty href", `[{"rel":"next","href":""}]`, paginate.ErrBadLink},
		{"links not an array", `{"next":"/items?page=2"}`, paginate.ErrBadLink},
		{"rel not a string", `[{"rel":["next"],"href":"/x"}]`, paginate.ErrBadLink},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `{"features":[{"id":1}],"links":%s}`, c.links)
			})
			req, _ := http.NewRequest("GET", srv.URL+"/items", nil)
			pages, err := collect(paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{Next: paginate.JSONLinks, Items: "features"}))
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if len(pages) != 1 || len(srv.requests()) != 1 {
				t.Errorf("%d pages yielded, %d requests; want the first page only", len(pages), len(srv.requests()))
			}
		})
	}
}

func TestWalkCursor(t *testing.T) {
	t.Parallel()
	// The cursor is a string, then a number, then null.
	cursors := map[string]string{"": `"abc"`, "abc": `42`, "42": `null`}
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"data":[{"id":%q}],"meta":{"next_cursor":%s}}`, r.URL.Query().Get("cursor"), cursors[r.URL.Query().Get("cursor")])
	})
	req, _ := http.NewRequest("GET", srv.URL+"/v1/rows?limit=1&cursor=&q=a+b", nil)
	var got []string
	for p, err := range paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{Next: paginate.Cursor("meta.next_cursor", "cursor"), Items: "data"}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items.All() {
			got = append(got, string(it))
		}
	}
	if want := []string{`{"id":""}`, `{"id":"abc"}`, `{"id":"42"}`}; !reflect.DeepEqual(got, want) {
		t.Errorf("items = %q, want %q", got, want)
	}
	if want := []string{"/v1/rows?limit=1&cursor=&q=a+b", "/v1/rows?limit=1&q=a+b&cursor=abc", "/v1/rows?limit=1&q=a+b&cursor=42"}; !reflect.DeepEqual(srv.requests(), want) {
		t.Errorf("requests = %q, want %q", srv.requests(), want)
	}
}

func TestWalkCursorEnds(t *testing.T) {
	t.Parallel()
	for _, last := range []string{`{"data":[1]}`, `{"data":[1],"next":null}`, `{"data":[1],"next":""}`} {
		srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, last) })
		req, _ := http.NewRequest("GET", srv.URL, nil)
		w := paginate.NewWalk(srv.client(t), req, paginate.Options{Next: paginate.Cursor("next", "cursor"), Items: "data"})
		pages, err := collect(w.All(context.Background()))
		if err != nil || len(pages) != 1 || !w.Summary().Complete {
			t.Errorf("%s: %d pages, %v, complete %v; want one complete page", last, len(pages), err, w.Summary().Complete)
		}
	}
}

func TestWalkCursorRefusals(t *testing.T) {
	t.Parallel()
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("c") {
		case "":
			fmt.Fprint(w, `{"data":[1],"next":"x"}`)
		case "x":
			fmt.Fprint(w, `{"data":[2],"next":{"token":"y"}}`)
		}
	})
	req, _ := http.NewRequest("GET", srv.URL, nil)
	pages, err := collect(paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{Next: paginate.Cursor("next", "c"), Items: "data"}))
	if !errors.Is(err, paginate.ErrBadCursor) || len(pages) != 2 {
		t.Errorf("%d pages, err %v; want 2 pages then ErrBadCursor", len(pages), err)
	}
}

func TestWalkRefusesLinks(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-secret"
	foreign := newServer(t, false, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `[]`) })
	foreignHost := strings.TrimPrefix(foreign.URL, "http://")
	cases := []struct {
		name  string
		tls   bool
		next  func(base string) string // the link page 2 carries
		err   error
		pages int // yielded before the error
		want  []string
	}{
		{name: "foreign host", next: func(string) string { return foreign.URL + "/steal?api_key=" + secret },
			err: paginate.ErrCrossHost, pages: 2, want: []string{"refusing to follow a cross-host next-page link", "points at " + foreignHost + " rather than 127.0.0.1:"}},
		{name: "protocol-relative", next: func(string) string { return "//" + foreignHost + "/x" }, err: paginate.ErrCrossHost, pages: 2},
		{name: "downgrade", tls: true, next: func(base string) string { return strings.Replace(base, "https://", "http://", 1) + "/items?page=3" },
			err: paginate.ErrDowngrade, pages: 2, want: []string{"downgrades https to http"}},
		{name: "javascript", next: func(string) string { return "javascript:alert(1)" }, err: paginate.ErrScheme, pages: 2},
		{name: "repeat", next: func(base string) string { return base + "/items?page=1" }, err: paginate.ErrLoop, pages: 2,
			want: []string{"repeats a page already fetched", "/items?page=1", "on page 2"}},
		{name: "self", next: func(base string) string { return "?page=2" }, err: paginate.ErrLoop, pages: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var base string
			srv := newServer(t, c.tls, func(w http.ResponseWriter, r *http.Request) {
				switch pageNumber(r) {
				case 1:
					w.Header().Set("Link", `</items?page=2>; rel=next`)
				case 2:
					w.Header().Set("Link", "<"+c.next(base)+">; rel=next")
				}
				fmt.Fprint(w, `[{"id":1}]`)
			})
			base = srv.URL
			req, _ := http.NewRequest("GET", srv.URL+"/items?page=1", nil)
			pages, err := collect(paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{}))
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if len(pages) != c.pages {
				t.Errorf("%d pages before the error, want %d", len(pages), c.pages)
			}
			if n := len(srv.requests()); n != c.pages {
				t.Errorf("server saw %d requests, want %d", n, c.pages)
			}
			msg := err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, secret) {
				t.Errorf("message leaks the key: %q", msg)
			}
		})
	}
	if n := len(foreign.requests()); n != 0 {
		t.Errorf("the foreign host was contacted %d times", n)
	}
}

func TestWalkStripsUserinfo(t *testing.T) {
	t.Parallel()
	var base string
	var auth []string
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		if pageNumber(r) == 1 {
			u, _ := url.Parse(base + "/items?page=2")
			u.User = url.UserPassword("admin", "pw")
			w.Header().Set("Link", "<"+u.String()+">; rel=next")
		}
		fmt.Fprint(w, `[]`)
	})
	base = srv.URL
	req, _ := http.NewRequest("GET", srv.URL+"/items", nil)
	pages, err := collect(paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{}))
	if err != nil || len(pages) != 2 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	if pages[1].URL.User != nil || !reflect.DeepEqual(auth, []string{"", ""}) {
		t.Errorf("userinfo reached the request: URL %v, Authorization %q", pages[1].URL, auth)
	}
}

func TestWalkCanonicalHost(t *testing.T) {
	t.Parallel()
	srv := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if pageNumber(r) == 1 {
			w.Header().Set("Link", `<http://backend-7.internal:8080/items?page=2>; rel=next`)
		}
		fmt.Fprint(w, `[]`)
	})
	host := strings.TrimPrefix(srv.URL, "https://")
	req, _ := http.NewRequest("GET", srv.URL+"/items", nil)
	pages, err := collect(paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{CanonicalHost: host}))
	if err != nil || len(pages) != 2 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	if got, want := pages[1].URL.String(), srv.URL+"/items?page=2"; got != want {
		t.Errorf("page 2 URL = %q, want %q", got, want)
	}
}

func TestWalkOtherAllowedHost(t *testing.T) {
	t.Parallel()
	second := newServer(t, false, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `[{"id":2}]`) })
	first := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "<"+second.URL+"/p2>; rel=next")
		fmt.Fprint(w, `[{"id":1}]`)
	})
	hosts := []string{strings.TrimPrefix(first.URL, "http://"), strings.TrimPrefix(second.URL, "http://")}
	req, _ := http.NewRequest("GET", first.URL, nil)
	req.Host = "virtual.example" // kept for the first host only
	pages, err := collect(paginate.Pages(context.Background(), first.client(t), req, paginate.Options{AllowedHosts: hosts}))
	if err != nil || len(pages) != 2 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	if req.Host != "virtual.example" || req.URL.String() != first.URL {
		t.Errorf("the caller's request changed: %q %q", req.Host, req.URL)
	}
}

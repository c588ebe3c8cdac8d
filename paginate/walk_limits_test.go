package paginate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/paginate"
)

// numbered serves last pages of per items, linked by Link headers.
func numbered(t *testing.T, per, last int) *server {
	t.Helper()
	return newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		n := pageNumber(r)
		if n < last {
			w.Header().Set("Link", fmt.Sprintf(`<?page=%d>; rel=next`, n+1))
		}
		fmt.Fprint(w, itemsJSON((n-1)*per+1, per))
	})
}

func TestWalkMaxRows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		maxRows  int
		requests int
		lastLen  int
		trimmed  int
		complete bool
		next     string // query of Summary.Next
	}{
		{name: "mid page", maxRows: 25, requests: 3, lastLen: 5, trimmed: 5, next: "page=4"},
		{name: "page boundary", maxRows: 20, requests: 2, lastLen: 10, next: "page=3"},
		{name: "first item", maxRows: 1, requests: 1, lastLen: 1, trimmed: 9, next: "page=2"},
		{name: "all of it", maxRows: 40, requests: 4, lastLen: 10, complete: true},
		{name: "more than there is", maxRows: 1000, requests: 4, lastLen: 10, complete: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := numbered(t, 10, 4)
			req, _ := http.NewRequest("GET", srv.URL+"/", nil)
			w := paginate.NewWalk(srv.client(t), req, paginate.Options{MaxRows: c.maxRows})
			pages, err := collect(w.All(context.Background()))
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, p := range pages {
				got = append(got, ids(t, p.Items)...)
			}
			if want := seqInts(1, min(c.maxRows, 40)); !reflect.DeepEqual(got, want) {
				t.Errorf("ids = %v, want %v", got, want)
			}
			if n := len(srv.requests()); n != c.requests {
				t.Errorf("%d requests, want %d", n, c.requests)
			}
			if n := pages[len(pages)-1].Items.Len(); n != c.lastLen {
				t.Errorf("last page has %d items, want %d", n, c.lastLen)
			}
			s := w.Summary()
			if s.Items != len(got) || s.Trimmed != c.trimmed || s.Complete != c.complete {
				t.Errorf("summary = %+v", s)
			}
			if gotNext := ""; s.Next != nil {
				gotNext = s.Next.RawQuery
				if gotNext != c.next {
					t.Errorf("Summary.Next = %v, want query %q", s.Next, c.next)
				}
			} else if c.next != "" {
				t.Errorf("Summary.Next = nil, want query %q", c.next)
			}
		})
	}
}

func TestWalkMaxPages(t *testing.T) {
	t.Parallel()
	srv := numbered(t, 2, 10)
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	w := paginate.NewWalk(srv.client(t), req, paginate.Options{MaxPages: 3})
	pages, err := collect(w.All(context.Background()))
	if err != nil || len(pages) != 3 || len(srv.requests()) != 3 {
		t.Fatalf("%d pages, %d requests, %v; want 3", len(pages), len(srv.requests()), err)
	}
	if s := w.Summary(); s.Complete || s.Next == nil || s.Next.RawQuery != "page=4" {
		t.Errorf("summary = %+v, want incomplete with Next at page 4", s)
	}
}

// A break stops the walk. At Concurrency 1 nothing past the page in hand
// is asked for; by default a Link walk may have asked for the next page
// already (ADR 0368), so the server sees at most that one request more,
// which the walk cancels (TestLinkWalkStopsTheNextRequestWithItsCaller
// holds the exact order in a bubble).
func TestWalkEarlyBreak(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		concurrency, most int
	}{{1, 2}, {0, 3}} {
		srv := numbered(t, 5, 100)
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		n := 0
		for p, err := range paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{Concurrency: c.concurrency}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; p.Number == 2 {
				break
			}
		}
		if got := len(srv.requests()); n != 2 || got < 2 || got > c.most {
			t.Errorf("Concurrency %d: ranged %d pages, server saw %d requests; want 2 pages and 2 to %d requests", c.concurrency, n, got, c.most)
		}
	}
	// The client's cleanup checks every body was closed; TestMain checks
	// that nothing is left running.
}

func TestWalkRangedAgainStartsOver(t *testing.T) {
	t.Parallel()
	srv := numbered(t, 1, 3)
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	w := paginate.NewWalk(srv.client(t), req, paginate.Options{})
	for range 2 {
		pages, err := collect(w.All(context.Background()))
		if err != nil || len(pages) != 3 || w.Summary().Pages != 3 {
			t.Fatalf("%d pages, %v, summary %+v", len(pages), err, w.Summary())
		}
	}
}

func TestWalkPageErrors(t *testing.T) {
	t.Parallel()
	const secret = "k-123-secret"
	cases := []struct {
		name  string
		page2 func(w http.ResponseWriter)
		opt   paginate.Options
		err   error
		check func(t *testing.T, e *paginate.Error)
		want  []string
	}{
		{name: "not JSON", page2: func(w http.ResponseWriter) { fmt.Fprint(w, `[{"id":1},<html>`) }, err: paginate.ErrNotJSON,
			check: func(t *testing.T, e *paginate.Error) {
				if e.Offset != 10 {
					t.Errorf("Offset = %d, want 10", e.Offset)
				}
			},
			want: []string{"page 2 (", "/items?api_key=REDACTED&page=2) is not valid JSON at byte 10"}},
		{name: "truncated JSON", page2: func(w http.ResponseWriter) { fmt.Fprint(w, `[{"id":1},{"id"`) }, err: paginate.ErrNotJSON,
			want: []string{"at byte 15", "unexpected end"}},
		{name: "empty body", page2: func(w http.ResponseWriter) {}, err: paginate.ErrEmptyBody},
		{name: "object where an array is expected", page2: func(w http.ResponseWriter) { fmt.Fprint(w, `{"data":[]}`) }, err: paginate.ErrNoItems,
			want: []string{"an object, not an array, at the top level; set Options.Items"}},
		{name: "missing items", opt: paginate.Options{Items: "data"}, page2: func(w http.ResponseWriter) { fmt.Fprint(w, `{"date":[]}`) }, err: paginate.ErrNoItems,
			want: []string{`nothing at "data"`}},
		{name: "server error", page2: func(w http.ResponseWriter) {
			w.WriteHeader(503)
			fmt.Fprint(w, "upstream down; your key "+secret+" "+strings.Repeat("x", 5000))
		}, err: paginate.ErrStatus,
			check: func(t *testing.T, e *paginate.Error) {
				if e.Status != 503 || !strings.HasPrefix(e.Excerpt, "upstream down") || len(e.Excerpt) != paginate.ExcerptBytes {
					t.Errorf("Status %d, excerpt of %d bytes %.20q", e.Status, len(e.Excerpt), e.Excerpt)
				}
			},
			want: []string{"page 2 (", ") answered 503 Service Unavailable"}},
		{name: "too large with length", opt: paginate.Options{MaxPageBytes: 100}, page2: func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", "101")
			fmt.Fprint(w, "["+strings.Repeat(" ", 99)+"]")
		}, err: liveness.ErrBodyTooLarge, want: []string{"exceeds the limit of 100 bytes"}},
		{name: "too large streamed", opt: paginate.Options{MaxPageBytes: 100}, page2: func(w http.ResponseWriter) {
			for range 10 {
				fmt.Fprint(w, strings.Repeat(" ", 50))
				w.(http.Flusher).Flush()
			}
		}, err: liveness.ErrBodyTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				if pageNumber(r) == 2 {
					c.page2(w)
					return
				}
				w.Header().Set("Link", "</items?api_key="+secret+"&page=2>; rel=next")
				if c.opt.Items == "data" {
					fmt.Fprint(w, `{"data":[1]}`)
				} else {
					fmt.Fprint(w, `[1]`)
				}
			})
			req, _ := http.NewRequest("GET", srv.URL+"/items", nil)
			w := paginate.NewWalk(srv.client(t), req, c.opt)
			pages, err := collect(w.All(context.Background()))
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if len(pages) != 1 {
				t.Errorf("%d pages before the error, want 1", len(pages))
			}
			var e *paginate.Error
			if !errors.As(err, &e) || e.Page != 2 {
				t.Fatalf("err %#v is not a *paginate.Error about page 2", err)
			}
			if c.check != nil {
				c.check(t, e)
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
			if s := w.Summary(); s.Complete || s.Next == nil || s.Next.Query().Get("page") != "2" {
				t.Errorf("summary = %+v, want Next at the failed page", s)
			}
		})
	}
}

func TestWalkEmptyBodyWithoutItems(t *testing.T) {
	t.Parallel()
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if pageNumber(r) == 1 {
			w.Header().Set("Link", `<?page=2>; rel=next`)
			fmt.Fprint(w, "id,name\n1,a\n")
		}
	})
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	pages, err := collect(paginate.Pages(context.Background(), srv.client(t), req, paginate.Options{Items: paginate.NoItems}))
	if err != nil || len(pages) != 2 || string(pages[0].Body) != "id,name\n1,a\n" || len(pages[1].Body) != 0 || pages[0].Items.Len() != 0 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
}

// bufferedBody stands in for the retrying transport's body read inside the
// attempt: it offers the bytes without a copy.
type bufferedBody struct {
	*bytes.Reader
	data []byte
}

func (b *bufferedBody) Bytes() []byte { return b.data }
func (b *bufferedBody) Close() error  { return nil }

func TestWalkTakesBufferedBodyWithoutCopy(t *testing.T) {
	t.Parallel()
	data := []byte(`[1,2,3]`)
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: -1,
			Body: &bufferedBody{Reader: bytes.NewReader(data), data: data}}, nil
	})
	req, _ := http.NewRequest("GET", "https://api.example.gov/x", nil)
	pages, err := collect(paginate.Pages(context.Background(), &http.Client{Transport: rt}, req, paginate.Options{}))
	if err != nil || len(pages) != 1 || &pages[0].Body[0] != &data[0] || pages[0].Items.Len() != 3 {
		t.Fatalf("pages %v, err %v; want the transport's buffer itself", pages, err)
	}
	_, err = collect(paginate.Pages(context.Background(), &http.Client{Transport: rt}, req, paginate.Options{MaxPageBytes: 5}))
	if !errors.Is(err, liveness.ErrBodyTooLarge) {
		t.Errorf("a buffered body over the limit gave %v", err)
	}
}

func TestWalkBodyReadFailure(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset mid-body")
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: 100,
			Body: io.NopCloser(io.MultiReader(strings.NewReader(`[1,2,`), errReader{boom}))}, nil
	})
	req, _ := http.NewRequest("GET", "https://api.example.gov/x", nil)
	_, err := collect(paginate.Pages(context.Background(), countingClient(t, rt), req, paginate.Options{}))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read failure", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

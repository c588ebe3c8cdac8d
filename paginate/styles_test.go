package paginate_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/steadytest"
)

// styleCase is one paging style against the steadytest style that serves
// it.
type styleCase struct {
	name   string
	server steadytest.Style
	query  string // of the first request
	style  string // as ParseStyle reads it
	items  string
}

var styleCases = []styleCase{
	{"json-server 0.17 _start/_limit", steadytest.Offset, "?_limit=100", "offset:_start:_limit", ""},
	{"offset without a limit parameter", steadytest.Offset, "", "offset:_start", ""},
	{"json-server 0.17 _page/_limit", steadytest.PageLimit, "?_page=1&_limit=100", "page:_page:_limit", ""},
	{"json-server 1.x _page/_per_page", steadytest.PerPage, "?_page=1&_per_page=100", "page:_page:_per_page", "data"},
	{"PostgREST Range", steadytest.Range, "", "range:100", ""},
	{"PostgREST Range, the server's size", steadytest.Range, "", "range", ""},
	{"S3 ListObjectsV2", steadytest.S3, "?list-type=2&max-keys=100", "xml:ListBucketResult/NextContinuationToken:continuation-token", ""},
}

// Every style walks every row once, in order, whether the last page is
// short or exactly full, and checks the total each server announces.
func TestStylesWalkEveryRowOnce(t *testing.T) {
	for _, c := range styleCases {
		for _, rows := range []int{1, 999, 1000, 2345} {
			t.Run(fmt.Sprintf("%s/%d rows", c.name, rows), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					next, err := paginate.ParseStyle(c.style)
					if err != nil {
						t.Fatal(err)
					}
					tr := &memTransport{h: styleHandler(t, c.server, rows, steadytest.Faults{}), latency: time.Millisecond}
					req := mustRequest(t, "http://api.test/items"+c.query)
					got, w, err := walkIDs(t, &http.Client{Transport: tr}, req, paginate.Options{Next: next, Items: c.items})
					if err != nil {
						t.Fatal(err)
					}
					checkSequence(t, got, 1, rows)
					if s := w.Summary(); !s.Complete || s.Next != nil || s.Items != rows {
						t.Errorf("summary %+v", s)
					}
				})
			})
		}
	}
}

// A server that ignores the paging parameter serves the first page again:
// the walk refuses it rather than looping or delivering it twice.
func TestStylesRefuseARepeatedPage(t *testing.T) {
	for _, c := range styleCases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				next, _ := paginate.ParseStyle(c.style)
				faults := steadytest.Faults{Script: map[int]steadytest.Fault{3: {Kind: steadytest.RepeatNext}}}
				if c.server == steadytest.S3 {
					faults.Script = map[int]steadytest.Fault{2: {Kind: steadytest.RepeatNext}}
				}
				tr := &memTransport{h: styleHandler(t, c.server, 2500, faults), latency: time.Millisecond}
				got, _, err := walkIDs(t, &http.Client{Transport: tr}, mustRequest(t, "http://api.test/items"+c.query),
					paginate.Options{Next: next, Items: c.items})
				if !errors.Is(err, paginate.ErrLoop) {
					t.Fatalf("err = %v, want ErrLoop", err)
				}
				seen := map[int]bool{}
				for _, id := range got {
					if seen[id] {
						t.Fatalf("row %d delivered twice", id)
					}
					seen[id] = true
				}
			})
		})
	}
}

// A total the pages fall short of, and one they exceed, are both errors
// that name the two numbers.
func TestComputedStylesCheckTheTotal(t *testing.T) {
	cases := []struct {
		name, style, query string
		served, announced  int
		want               string
	}{
		{"offset short", "offset:_start:_limit", "?_limit=10", 95, 100, "announced 100 items, and the pages ended at 95"},
		{"offset excess", "offset:_start:_limit", "?_limit=10", 105, 100, "announced 100 items, and the pages hold at least 105"},
		{"offset excess at a full page", "offset:_start:_limit", "?_limit=10", 110, 100, "announced 100 items, and the pages hold at least 110"},
		{"page short", "page:_page:_limit", "?_limit=10", 90, 100, "announced 100 items, and the pages ended at 90"},
		{"range short", "range:10", "", 95, 100, "announced 100 items, and the pages ended at 95"},
		{"range excess", "range:10", "", 105, 95, "announced 95 items, and the pages hold at least 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				servePlain(w, r, c.served, c.announced)
			})
			next, _ := paginate.ParseStyle(c.style)
			w := paginate.NewWalk(srv.client(t), mustRequest(t, srv.URL+"/items"+c.query), paginate.Options{Next: next})
			_, err := collect(w.All(t.Context()))
			if !errors.Is(err, paginate.ErrTotal) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrTotal saying %q", err, c.want)
			}
			if w.Summary().Complete {
				t.Error("a walk that does not add up is complete")
			}
		})
	}
}

// A json-server 1.x walk checks the page count its first page announces,
// when no item count says more.
func TestPageWalkChecksThePageCount(t *testing.T) {
	for _, c := range []struct {
		name         string
		pages, serve int // announced, and pages with rows
		want         string
	}{
		{"short", 5, 3, "announced 5 pages, and the pages ended at page 4"},
		{"excess", 3, 5, "announced 3 pages, and page 4 holds 10 items"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				var page int
				fmt.Sscan(r.URL.Query().Get("_page"), &page)
				n := 0
				if page <= c.serve {
					n = 10
				}
				fmt.Fprintf(w, `{"pages":%d,"data":%s}`, c.pages, itemsJSON((page-1)*10+1, n))
			})
			_, _, err := walkIDs(t, srv.client(t), mustRequest(t, srv.URL+"/items?_page=1&_per_page=10"),
				paginate.Options{Next: paginate.PageNumber("_page", "_per_page"), Items: "data"})
			if !errors.Is(err, paginate.ErrTotal) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrTotal saying %q", err, c.want)
			}
		})
	}
}

// servePlain serves served rows {"id":k} in pages by _start, _page or
// Range, announcing announced of them as X-Total-Count or Content-Range.
func servePlain(w http.ResponseWriter, r *http.Request, served, announced int) {
	q := r.URL.Query()
	limit, start := 10, 0
	fmt.Sscan(q.Get("_limit"), &limit)
	fmt.Sscan(q.Get("_start"), &start)
	if p := q.Get("_page"); p != "" {
		var n int
		fmt.Sscan(p, &n)
		start = (n - 1) * limit
	}
	if rg := r.Header.Get("Range"); rg != "" {
		var a, b int
		fmt.Sscanf(rg, "%d-%d", &a, &b)
		start, limit = a, b-a+1
	}
	end := min(start+limit, served)
	n := max(end-start, 0)
	if r.Header.Get("Range") != "" {
		w.Header().Set("Content-Range", fmt.Sprintf("%d-%d/%d", start, start+n-1, announced))
		if n == 0 {
			w.Header().Set("Content-Range", fmt.Sprintf("*/%d", announced))
		}
	} else {
		w.Header().Set("X-Total-Count", fmt.Sprint(announced))
	}
	fmt.Fprint(w, itemsJSON(start+1, n))
}

func TestParseStyle(t *testing.T) {
	good := []string{"link", "json-links", "auto", "cursor:meta.next:cursor", "body-link:next", "body-link:meta.next_url", "offset:_start", "offset:offset:limit",
		"page:page", "page:_page:_per_page", "range", "range:500", "xml:ListBucketResult/NextContinuationToken:continuation-token:ListBucketResult/Contents"}
	for _, s := range good {
		n, err := paginate.ParseStyle(s)
		if err != nil {
			t.Errorf("ParseStyle(%q): %v", s, err)
			continue
		}
		back := paginate.Spelling(n)
		if again, err := paginate.ParseStyle(back); err != nil || paginate.Spelling(again) != back {
			t.Errorf("%q spelled back as %q, which reads as %v, %v", s, back, again, err)
		}
	}
	bad := []string{"", "links", "offset", "offset:", "offset::limit", "offset:a:b:c", "page", "range:0", "range:-1",
		"range:x", "cursor:next", "xml:a", "xml:/a:b", "xml:a//b:c", "offset:api_key", "link:x", ":", "auto:", "body-link", "body-link:a..b"}
	for _, s := range bad {
		_, err := paginate.ParseStyle(s)
		var se *paginate.StyleError
		if !errors.As(err, &se) || !errors.Is(err, paginate.ErrStyle) {
			t.Errorf("ParseStyle(%q) = %v, want a *StyleError", s, err)
		}
	}
}

// What Detect proves from the first page of each served style walks every
// row; a first request without the parameters to prove it says so.
func TestDetectThenWalk(t *testing.T) {
	linked := []styleCase{
		{"Link header", steadytest.LinkHeader, "", "link", ""},
		{"OGC links", steadytest.JSONLinks, "", "json-links", "features"},
		{"cursor", steadytest.Cursor, "", "cursor:next_cursor:cursor", "data"},
	}
	for _, c := range append(linked, styleCases...) {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &memTransport{h: styleHandler(t, c.server, 2345, steadytest.Faults{}), latency: time.Millisecond}
				client := &http.Client{Transport: tr}
				first := paginate.NewWalk(client, mustRequest(t, "http://api.test/items"+c.query), paginate.Options{Items: paginate.NoItems, MaxPages: 1})
				pages, err := collect(first.All(t.Context()))
				if err != nil {
					t.Fatal(err)
				}
				d, err := paginate.Detect(pages[0])
				if c.query == "" && c.server == steadytest.Offset {
					if !errors.Is(err, paginate.ErrUndetected) {
						t.Fatalf("Detect = %+v, %v; want ErrUndetected", d, err)
					}
					return
				}
				if err != nil || d.Single {
					t.Fatalf("Detect = %+v, %v", d, err)
				}
				got, _, err := walkIDs(t, client, mustRequest(t, "http://api.test/items"+c.query), paginate.Options{Next: d.Next, Items: d.Items})
				if err != nil {
					t.Fatal(err)
				}
				checkSequence(t, got, 1, 2345)
			})
		})
	}
}

// Through the retrying transport, every style walks every row once, in
// order, while a quarter of the requests fail: statuses, resets, cut and
// stalled bodies. Computed styles fetch four pages at a time, all under
// the same transport.
func TestStylesThroughHarshFaults(t *testing.T) {
	for _, c := range styleCases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				next, _ := paginate.ParseStyle(c.style)
				tr := &memTransport{h: styleHandler(t, c.server, 3000, steadytest.Harsh(7)), latency: 5 * time.Millisecond}
				rt := retry.New(tr, retry.Policy{MaxAttempts: 12})
				client := &http.Client{Transport: rt}
				got, w, err := walkIDs(t, client, mustRequest(t, "http://api.test/items"+c.query),
					paginate.Options{Next: next, Items: c.items, Concurrency: 4})
				if err != nil {
					t.Fatal(err)
				}
				checkSequence(t, got, 1, 3000)
				if s := w.Summary(); !s.Complete || s.Retries == 0 {
					t.Errorf("summary %+v: want complete, with retries", s)
				}
				if c.server != steadytest.S3 && c.style != "range" && tr.max < 2 {
					t.Errorf("at most %d requests in flight", tr.max)
				}
			})
		})
	}
}

// A server that serves fewer rows than asked (its own cap) does not end
// the walk after one page: the total says more follow, or, with none, the
// walk asks once more.
func TestComputedStylesMeetAServersCap(t *testing.T) {
	for _, c := range styleCases {
		if c.server == steadytest.S3 || c.style == "range" || c.style == "offset:_start" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, err := steadytest.NewHandler(steadytest.ServerOptions{Rows: 1234, Style: c.server, MaxLimit: 40, DefaultLimit: 40, LogLimit: -1})
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				next, _ := paginate.ParseStyle(c.style)
				tr := &memTransport{h: h, latency: time.Millisecond}
				got, _, err := walkIDs(t, &http.Client{Transport: tr}, mustRequest(t, "http://api.test/items"+c.query),
					paginate.Options{Next: next, Items: c.items, Concurrency: 3})
				if err != nil {
					t.Fatal(err)
				}
				checkSequence(t, got, 1, 1234)
			})
		})
	}
	t.Run("no total", func(t *testing.T) {
		srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
			var start int
			fmt.Sscan(r.URL.Query().Get("offset"), &start)
			fmt.Fprint(w, itemsJSON(start+1, max(min(30, 95-start), 0))) // asked for 100, serves 30
		})
		got, _, err := walkIDs(t, srv.client(t), mustRequest(t, srv.URL+"/items?limit=100"),
			paginate.Options{Next: paginate.Offset("offset", "limit")})
		if err != nil {
			t.Fatal(err)
		}
		checkSequence(t, got, 1, 95)
	})
}

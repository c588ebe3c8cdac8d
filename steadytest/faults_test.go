package steadytest_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/steadyhttp/steady/steadytest"
)

// outcome is what a real client saw of one request.
type outcome struct {
	resp    *http.Response
	body    []byte
	err     error // from Do
	readErr error // from reading the body
}

func fetch(c *http.Client, u string) outcome {
	resp, err := c.Get(u)
	if err != nil {
		return outcome{err: err}
	}
	defer resp.Body.Close()
	body, readErr := io.ReadAll(resp.Body)
	return outcome{resp: resp, body: body, readErr: readErr}
}

func TestEachFaultAsARealClientSeesIt(t *testing.T) {
	noRedirect := func(c *http.Client) *http.Client {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		return c
	}
	const rows, limit = 200, 100
	cases := []struct {
		name  string
		style steadytest.Style
		fault steadytest.Fault
		check func(t *testing.T, s *steadytest.Server, o outcome)
	}{
		{"503 without Retry-After", 0, steadytest.Fault{Kind: steadytest.Status}, func(t *testing.T, s *steadytest.Server, o outcome) {
			wantStatus(t, o, http.StatusServiceUnavailable)
			if _, ok := o.resp.Header["Retry-After"]; ok {
				t.Errorf("Retry-After present: %q", o.resp.Header.Get("Retry-After"))
			}
			if !strings.Contains(string(o.body), `"error":"unavailable"`) {
				t.Errorf("body = %s", o.body)
			}
		}},
		{"429 with Retry-After seconds rounded up", 0, steadytest.Fault{Kind: steadytest.Status, Status: 429, RetryAfter: 1500 * time.Millisecond}, func(t *testing.T, s *steadytest.Server, o outcome) {
			wantStatus(t, o, http.StatusTooManyRequests)
			if got := o.resp.Header.Get("Retry-After"); got != "2" {
				t.Errorf("Retry-After = %q, want 2", got)
			}
		}},
		{"503 with Retry-After as HTTP-date", 0, steadytest.Fault{Kind: steadytest.Status, RetryAfter: 3 * time.Second, RetryAfterDate: true}, func(t *testing.T, s *steadytest.Server, o outcome) {
			wantStatus(t, o, http.StatusServiceUnavailable)
			v := o.resp.Header.Get("Retry-After")
			when, err := http.ParseTime(v)
			if err != nil || !strings.HasSuffix(v, " GMT") {
				t.Fatalf("Retry-After %q is not an HTTP-date: %v", v, err)
			}
			sent, err := http.ParseTime(o.resp.Header.Get("Date"))
			if err != nil {
				t.Fatal(err)
			}
			if d := when.Sub(sent); d < 3*time.Second || d > 4*time.Second {
				t.Errorf("Retry-After is %v after Date, want 3s to 4s", d)
			}
		}},
		{"502 comes as HTML", 0, steadytest.Fault{Kind: steadytest.Status, Status: 502}, func(t *testing.T, s *steadytest.Server, o outcome) {
			wantStatus(t, o, http.StatusBadGateway)
			if ct := o.resp.Header.Get("Content-Type"); ct != "text/html" || !strings.Contains(string(o.body), "<h1>502 Bad Gateway</h1>") {
				t.Errorf("Content-Type %q body %q, want an HTML page", ct, o.body)
			}
		}},
		{"reset before headers", 0, steadytest.Fault{Kind: steadytest.Reset}, func(t *testing.T, s *steadytest.Server, o outcome) {
			if !errors.Is(o.err, syscall.ECONNRESET) {
				t.Errorf("error = %v, want a connection reset", o.err)
			}
			wantLogged(t, s, steadytest.Reset, 0)
		}},
		{"reset mid-body", 0, steadytest.Fault{Kind: steadytest.ResetMidBody, After: 1000}, func(t *testing.T, s *steadytest.Server, o outcome) {
			if o.err != nil {
				t.Fatalf("headers should arrive: %v", o.err)
			}
			if !errors.Is(o.readErr, syscall.ECONNRESET) {
				t.Errorf("read error = %v, want a connection reset", o.readErr)
			}
			if len(o.body) > 1000 || o.resp.ContentLength <= 1000 {
				t.Errorf("read %d of Content-Length %d, want at most the 1000 sent", len(o.body), o.resp.ContentLength)
			}
			wantLogged(t, s, steadytest.ResetMidBody, 200)
		}},
		{"truncated body", 0, steadytest.Fault{Kind: steadytest.Truncate}, func(t *testing.T, s *steadytest.Server, o outcome) {
			if !errors.Is(o.readErr, io.ErrUnexpectedEOF) {
				t.Errorf("read error = %v, want io.ErrUnexpectedEOF", o.readErr)
			}
			if got, want := int64(len(o.body)), o.resp.ContentLength/2; got != want {
				t.Errorf("read %d bytes, want half of %d", got, o.resp.ContentLength)
			}
		}},
		{"truncated after 10 bytes", 0, steadytest.Fault{Kind: steadytest.Truncate, After: 10}, func(t *testing.T, s *steadytest.Server, o outcome) {
			if !errors.Is(o.readErr, io.ErrUnexpectedEOF) || len(o.body) != 10 {
				t.Errorf("read %d bytes then %v, want 10 then io.ErrUnexpectedEOF", len(o.body), o.readErr)
			}
		}},
		{"redirect to the other loopback name", 0, steadytest.Fault{Kind: steadytest.Redirect}, func(t *testing.T, s *steadytest.Server, o outcome) {
			wantStatus(t, o, http.StatusTemporaryRedirect)
			want := strings.Replace(s.URL, "127.0.0.1", "localhost", 1) + steadytest.ItemsPath + "?limit=100"
			if got := o.resp.Header.Get("Location"); got != want {
				t.Errorf("Location = %q, want %q", got, want)
			}
		}},
		{"next link to a foreign host", 0, steadytest.Fault{Kind: steadytest.ForeignNext}, func(t *testing.T, s *steadytest.Server, o outcome) {
			wantStatus(t, o, http.StatusOK)
			next, err := url.Parse(nextFromLink(o.resp.Header))
			if err != nil || !strings.HasPrefix(next.Host, "localhost:") {
				t.Errorf("next = %v (%v), want host localhost:PORT", next, err)
			}
		}},
		{"next link with userinfo", steadytest.JSONLinks, steadytest.Fault{Kind: steadytest.UserinfoNext}, func(t *testing.T, s *steadytest.Server, o outcome) {
			var p linksPage
			decode(t, o.body, &p)
			want := "http://user:pass@" + strings.TrimPrefix(s.URL, "http://") + steadytest.ItemsPath + "?limit=100&offset=100"
			if p.next() != want {
				t.Errorf("next = %q, want %q", p.next(), want)
			}
		}},
		{"next link repeating the page", 0, steadytest.Fault{Kind: steadytest.RepeatNext}, func(t *testing.T, s *steadytest.Server, o outcome) {
			if got, want := nextFromLink(o.resp.Header), s.URL+steadytest.ItemsPath+"?limit=100"; got != want {
				t.Errorf("next = %q, want the page itself %q", got, want)
			}
		}},
		{"cursor repeating the page", steadytest.Cursor, steadytest.Fault{Kind: steadytest.RepeatNext}, func(t *testing.T, s *steadytest.Server, o outcome) {
			var p cursorPage
			decode(t, o.body, &p)
			if p.NextCursor == nil {
				t.Fatal("no next cursor")
			}
			// The cursor handed out must lead back to the page just served.
			o2 := fetch(newClient(t), s.URL+steadytest.ItemsPath+"?limit=100&cursor="+*p.NextCursor)
			var p2 cursorPage
			decode(t, o2.body, &p2)
			if len(p2.Data) == 0 || p2.Data[0].ID != 1 {
				t.Errorf("the repeated cursor leads to %+v, want the first page again", p2.Data)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, steadytest.ServerOptions{
				Rows: rows, Style: c.style,
				Faults: steadytest.Faults{Script: map[int]steadytest.Fault{1: c.fault}},
			})
			o := fetch(noRedirect(freshClient(t)), s.URL+steadytest.ItemsPath+"?limit="+strconv.Itoa(limit))
			c.check(t, s, o)
			if got := s.Requests()[0].Fault; got != c.fault {
				t.Errorf("logged fault %v, want %v", got, c.fault)
			}
			// Request 2 is not scripted: the server is healthy again.
			if o := fetch(freshClient(t), s.URL+steadytest.ItemsPath); o.err != nil || o.readErr != nil || o.resp.StatusCode != 200 {
				t.Errorf("the request after the fault failed: %v %v %v", o.err, o.readErr, o.resp)
			}
		})
	}
}

func wantStatus(t *testing.T, o outcome, status int) {
	t.Helper()
	if o.err != nil || o.readErr != nil {
		t.Fatalf("request failed: %v %v", o.err, o.readErr)
	}
	if o.resp.StatusCode != status {
		t.Fatalf("status = %d, want %d", o.resp.StatusCode, status)
	}
}

func wantLogged(t *testing.T, s *steadytest.Server, kind steadytest.FaultKind, status int) {
	t.Helper()
	r := s.Requests()[0]
	if r.Fault.Kind != kind || r.Status != status {
		t.Errorf("log: fault %v status %d, want %v status %d", r.Fault.Kind, r.Status, kind, status)
	}
}

func TestRedirectLeadsToTheSameDataOnAnotherHost(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{Rows: 5, Faults: steadytest.Faults{
		Script: map[int]steadytest.Fault{1: {Kind: steadytest.Redirect, Status: http.StatusFound}},
	}})
	resp, body := get(t, newClient(t), s.URL+steadytest.ItemsPath)
	var rows []steadytest.Row
	decode(t, body, &rows)
	if resp.StatusCode != 200 || len(rows) != 5 {
		t.Fatalf("after the redirect: %s with %d rows", resp.Status, len(rows))
	}
	log := s.Requests()
	if len(log) != 2 || log[0].Status != http.StatusFound || !strings.HasPrefix(log[1].Host, "localhost:") {
		t.Errorf("log = %+v, want a 302 then a request to localhost", log)
	}
}

func TestNextLinkFaultsDoNotApplyWithoutANextPage(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{Rows: 5, Faults: steadytest.Faults{
		Script: map[int]steadytest.Fault{1: {Kind: steadytest.ForeignNext}},
	}})
	resp, _ := get(t, newClient(t), s.URL+steadytest.ItemsPath)
	if nextFromLink(resp.Header) != "" {
		t.Errorf("last page got a next link %q", nextFromLink(resp.Header))
	}
	if got := s.Requests()[0].Fault.Kind; got != steadytest.None {
		t.Errorf("logged %v, want none: nothing was corrupted", got)
	}
}

func TestRuleDecidesByPage(t *testing.T) {
	// "Fail for good after page 2": a rule sees the offset, not the arrival.
	s := newServer(t, steadytest.ServerOptions{Rows: 50, Faults: steadytest.Faults{
		Rule: func(c steadytest.Call) steadytest.Fault {
			if c.Offset >= 20 {
				return steadytest.Fault{Kind: steadytest.Status, Status: 500}
			}
			return steadytest.Fault{}
		},
	}})
	c := newClient(t)
	for offset, want := range map[int]int{0: 200, 10: 200, 20: 500, 40: 500} {
		if resp, _ := get(t, c, fmt.Sprintf("%s%s?limit=10&offset=%d", s.URL, steadytest.ItemsPath, offset)); resp.StatusCode != want {
			t.Errorf("offset %d: status %d, want %d", offset, resp.StatusCode, want)
		}
	}
}

// determinismMix has only faults that end at once, with a high rate so
// that many pages need several attempts.
func determinismMix(seed uint64) steadytest.Faults {
	return steadytest.Faults{Seed: seed, Mix: []steadytest.Chance{
		{0.15, steadytest.Fault{Kind: steadytest.Status, Status: 429}},
		{0.10, steadytest.Fault{Kind: steadytest.Status, Status: 503}},
		{0.10, steadytest.Fault{Kind: steadytest.Status, Status: 502}},
		{0.10, steadytest.Fault{Kind: steadytest.Reset}},
		{0.10, steadytest.Fault{Kind: steadytest.Truncate}},
	}}
}

// harvestPages fetches each of pages pages of 10 rows until it arrives
// whole, with workers goroutines, each taking the pages in order from a
// shared channel, and returns the faults the server applied keyed by page
// and attempt.
func harvestPages(t *testing.T, seed uint64, pages, workers int) map[string]steadytest.FaultKind {
	s := newServer(t, steadytest.ServerOptions{Rows: pages * 10, Faults: determinismMix(seed)})
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		c := newClient(t)
		wg.Go(func() {
			for p := range work {
				u := fmt.Sprintf("%s%s?limit=10&offset=%d", s.URL, steadytest.ItemsPath, p*10)
				ok := false
				for try := 0; try < 100 && !ok; try++ {
					o := fetch(c, u)
					ok = o.err == nil && o.readErr == nil && o.resp.StatusCode == 200
				}
				if !ok {
					errs <- fmt.Errorf("page %d never arrived", p)
				}
			}
		})
	}
	for p := range pages {
		work <- p
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := make(map[string]steadytest.FaultKind)
	for _, r := range s.Requests() {
		got[fmt.Sprintf("%s #%d", r.URL, r.Attempt)] = r.Fault.Kind
	}
	return got
}

func TestSameSeedSameFaultsEvenConcurrently(t *testing.T) {
	const pages = 60
	sequential := harvestPages(t, 42, pages, 1)
	concurrent := harvestPages(t, 42, pages, 8)
	again := harvestPages(t, 42, pages, 8)
	faulted := 0
	for _, k := range sequential {
		if k != steadytest.None {
			faulted++
		}
	}
	if faulted < pages/4 {
		t.Fatalf("only %d faults in %d requests; the test would prove little", faulted, len(sequential))
	}
	for name, run := range map[string]map[string]steadytest.FaultKind{"8 goroutines": concurrent, "8 goroutines again": again} {
		if diff := diffFaults(sequential, run); diff != "" {
			t.Errorf("%s drew different faults than one goroutine:\n%s", name, diff)
		}
	}
	if other := harvestPages(t, 43, pages, 1); diffFaults(sequential, other) == "" {
		t.Error("seeds 42 and 43 drew identical faults")
	}
}

func diffFaults(a, b map[string]steadytest.FaultKind) string {
	var lines []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			lines = append(lines, fmt.Sprintf("  %s: %v vs %v", k, v, w))
		}
	}
	for k, w := range b {
		if _, ok := a[k]; !ok {
			lines = append(lines, fmt.Sprintf("  %s: absent vs %v", k, w))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func TestScriptIsKeyedByArrival(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{Rows: 10, Faults: steadytest.Faults{
		Script: map[int]steadytest.Fault{2: {Kind: steadytest.Status, Status: 504}},
		// The script wins over a mix that would fail everything.
		Mix: []steadytest.Chance{{1, steadytest.Fault{Kind: steadytest.Status, Status: 500}}},
	}})
	c := newClient(t)
	var got []int
	for range 3 {
		resp, _ := get(t, c, s.URL+steadytest.ItemsPath)
		got = append(got, resp.StatusCode)
	}
	if want := []int{500, 504, 500}; !slices.Equal(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
}

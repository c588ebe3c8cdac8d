package paginate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/steadytest"
)

// cancelLog is a transport that notes each request's URI, and which of
// them were cancelled before they were answered.
type cancelLog struct {
	next      http.RoundTripper
	mu        sync.Mutex
	sent      []string
	cancelled []string
}

func (c *cancelLog) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.sent = append(c.sent, r.URL.RequestURI())
	c.mu.Unlock()
	resp, err := c.next.RoundTrip(r)
	if err != nil && r.Context().Err() != nil {
		c.mu.Lock()
		c.cancelled = append(c.cancelled, r.URL.RequestURI())
		c.mu.Unlock()
	}
	return resp, err
}

func (c *cancelLog) log() (sent, cancelled []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sent), slices.Clone(c.cancelled)
}

// A Link walk asks for the next page as soon as a page is read, so the
// page's check and the caller's work on it overlap the next request: 100
// pages of 20 ms each, handled for 20 ms each, take 101 x 20 ms, not 200.
// There is never more than one request in flight, each page is handed
// over with exactly the request after it sent, and the pages' events come
// in order.
func TestLinkWalkAsksForTheNextPageWhileThisOneIsHandled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rows, per, latency = 10_000, 100, 20 * time.Millisecond
		tr := &memTransport{h: styleHandler(t, steadytest.LinkHeader, rows, steadytest.Faults{}), latency: latency}
		var reported []int
		rep := event.ReporterFunc(func(e event.Event) {
			if e.Kind == event.PageReceived {
				reported = append(reported, e.Done)
			}
		})
		w := paginate.NewWalk(&http.Client{Transport: tr}, mustRequest(t, fmt.Sprintf("http://api.test/items?limit=%d", per)),
			paginate.Options{Reporter: rep})
		start := time.Now()
		var got []int
		for p, err := range w.All(t.Context()) {
			if err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			tr.mu.Lock()
			sent := tr.requests
			tr.mu.Unlock()
			want := p.Number + 1
			if p.Next == nil {
				want = p.Number
			}
			if sent != want {
				t.Fatalf("page %d handed over with %d requests sent, want %d", p.Number, sent, want)
			}
			got = append(got, pageIDs(t, p)...)
			time.Sleep(latency) // the caller's work on the page
		}
		elapsed := time.Since(start)
		checkSequence(t, got, 1, rows)
		pages := rows / per
		if want := time.Duration(pages+1) * latency; elapsed != want {
			t.Errorf("the walk took %v, want %v (one page at a time end to end: %v)", elapsed, want, 2*time.Duration(pages)*latency)
		}
		if tr.max != 1 {
			t.Errorf("%d requests in flight at once, want 1", tr.max)
		}
		if want := seqInts(1, pages); !slices.Equal(reported, want) {
			t.Errorf("pages reported %v, want 1..%d in order", reported, pages)
		}
		if s := w.Summary(); !s.Complete || s.Pages != pages || s.Items != rows {
			t.Errorf("summary %+v", s)
		}
	})
}

// When a page fails its check, the request already sent for the page
// after it is cancelled and its answer never seen: the walk ends with the
// page's own error and resumes at that page, as a walk that had not asked
// ahead would.
func TestLinkWalkCancelsTheNextRequestWhenAPageFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		items := styleHandler(t, steadytest.LinkHeader, 1000, steadytest.Faults{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("offset") == "200" {
				w.Header().Set("Link", `<http://api.test/items?limit=100&offset=300>; rel="next"`)
				fmt.Fprint(w, "<html>maintenance</html>")
				return
			}
			items.ServeHTTP(w, r)
		})
		tr := &cancelLog{next: &memTransport{h: h, latency: 20 * time.Millisecond}}
		got, w, err := walkIDs(t, &http.Client{Transport: tr}, mustRequest(t, "http://api.test/items?limit=100"), paginate.Options{})
		if !errors.Is(err, paginate.ErrNotJSON) {
			t.Fatalf("err = %v, want ErrNotJSON", err)
		}
		checkSequence(t, got, 1, 200)
		synctest.Wait()
		sent, cancelled := tr.log()
		ahead := "/items?limit=100&offset=300"
		if len(sent) != 4 || sent[3] != ahead || !slices.Equal(cancelled, []string{ahead}) {
			t.Errorf("sent %q, cancelled %q: want the fourth request, for the page after the failed one, cancelled", sent, cancelled)
		}
		if s := w.Summary(); s.Complete || s.Next == nil || s.Next.Query().Get("offset") != "200" {
			t.Errorf("summary %+v: want the walk to resume at the failed page", s)
		}
	})
}

// A caller that stops after a page, or whose context ends while it holds
// one, leaves the request for the next page cancelled and no goroutine
// in flight once the loop is left; the walk
// resumes at the page it did not hand over.
func TestLinkWalkStopsTheNextRequestWithItsCaller(t *testing.T) {
	for _, how := range []string{"break", "cancel"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := &memTransport{h: styleHandler(t, steadytest.LinkHeader, 1000, steadytest.Faults{}), latency: 20 * time.Millisecond}
				tr := &cancelLog{next: mem}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				w := paginate.NewWalk(&http.Client{Transport: tr}, mustRequest(t, "http://api.test/items?limit=100"), paginate.Options{})
				var pages int
				var walkErr error
				for p, err := range w.All(ctx) {
					if err != nil {
						walkErr = err
						break
					}
					if pages++; p.Number == 2 {
						if how == "break" {
							break
						}
						cancel()
					}
				}
				mem.mu.Lock()
				left := mem.inFlight
				mem.mu.Unlock()
				if left != 0 {
					t.Errorf("%d requests still in flight after the walk returned", left)
				}
				synctest.Wait()
				sent, cancelled := tr.log()
				third := "/items?limit=100&offset=200"
				if pages != 2 || len(sent) != 3 || !slices.Equal(cancelled, []string{third}) {
					t.Errorf("%d pages, sent %q, cancelled %q: want the third request cancelled", pages, sent, cancelled)
				}
				if how == "cancel" && !errors.Is(walkErr, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", walkErr)
				}
				if s := w.Summary(); s.Complete || s.Next == nil || s.Next.Query().Get("offset") != "200" {
					t.Errorf("summary %+v: want the walk to resume at the third page", s)
				}
			})
		})
	}
}

// A cap asks for no page past it: the walk does not ask ahead where the
// page it holds may be the last one it takes, and a page too large to hold
// two of is handled before the next is asked for.
func TestLinkWalkAsksNothingPastACap(t *testing.T) {
	cases := []struct {
		name string
		opt  paginate.Options
		want int // requests
	}{
		{"MaxPages", paginate.Options{MaxPages: 3}, 3},
		{"MaxRows", paginate.Options{MaxRows: 250}, 3},
		{"MaxRows on a page's end", paginate.Options{MaxRows: 300}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &cancelLog{next: &memTransport{h: styleHandler(t, steadytest.LinkHeader, 1000, steadytest.Faults{}), latency: 20 * time.Millisecond}}
				if _, _, err := walkIDs(t, &http.Client{Transport: tr}, mustRequest(t, "http://api.test/items?limit=100"), c.opt); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if sent, _ := tr.log(); len(sent) != c.want {
					t.Errorf("sent %q, want %d requests", sent, c.want)
				}
			})
		})
	}
	t.Run("a page past 4 MiB", func(t *testing.T) {
		pad := strings.Repeat("x", 1<<20)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("page") == "" {
				w.Header().Set("Link", `<http://api.test/items?page=2>; rel="next"`)
			}
			var b strings.Builder
			b.WriteByte('[')
			for i := range 5 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"id":%d,"pad":%q}`, i, pad)
			}
			b.WriteByte(']')
			fmt.Fprint(w, b.String())
		})
		handedOverAlone(t, h, paginate.Options{})
	})
	t.Run("Concurrency 1", func(t *testing.T) {
		handedOverAlone(t, styleHandler(t, steadytest.LinkHeader, 1000, steadytest.Faults{}), paginate.Options{Concurrency: 1})
	})
}

// handedOverAlone walks h with opt and fails unless each page is handed
// over before the request for the next is sent.
func handedOverAlone(t *testing.T, h http.Handler, opt paginate.Options) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		tr := &memTransport{h: h, latency: 20 * time.Millisecond}
		pages := 0
		for p, err := range paginate.Pages(t.Context(), &http.Client{Transport: tr}, mustRequest(t, "http://api.test/items?limit=100"), opt) {
			if err != nil {
				t.Fatal(err)
			}
			pages++
			synctest.Wait()
			tr.mu.Lock()
			sent := tr.requests
			tr.mu.Unlock()
			if sent != p.Number {
				t.Errorf("page %d of %d bytes handed over with %d requests sent, want %d", p.Number, len(p.Body), sent, p.Number)
			}
		}
		if pages < 2 {
			t.Errorf("%d pages, want more than one", pages)
		}
	})
}

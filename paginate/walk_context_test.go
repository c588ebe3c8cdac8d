package paginate_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/paginate"
)

// fakeAPI answers pages of a top-level array linked by Link headers, without
// a network, for tests that look at what each request carried.
func fakeAPI(last int, also func(r *http.Request, resp *http.Response)) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		n := pageNumber(r)
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
			Body: io.NopCloser(strings.NewReader(itemsJSON(n, 1))), ContentLength: -1}
		if n < last {
			resp.Header.Set("Link", fmt.Sprintf("<?page=%d>; rel=next", n+1))
		}
		if also != nil {
			also(r, resp)
		}
		return resp, nil
	}
}

func TestWalkRequests(t *testing.T) {
	t.Parallel()
	var got []*http.Request
	rt := fakeAPI(3, func(r *http.Request, _ *http.Response) { got = append(got, r) })
	req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
	req.Header.Set("Accept", "application/geo+json")
	req.Header.Set("X-Trace", "t1")
	before := req.Clone(context.Background())
	if _, err := collect(paginate.Pages(context.Background(), countingClient(t, rt), req, paginate.Options{MaxPageBytes: 12345})); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3", len(got))
	}
	var tracker *liveness.Tracker
	for i, r := range got {
		if r == req {
			t.Errorf("request %d is the caller's own", i)
		}
		if r.Method != "GET" || r.Header.Get("Accept") != "application/geo+json" || r.Header.Get("X-Trace") != "t1" {
			t.Errorf("request %d: %s %v", i, r.Method, r.Header)
		}
		if limit, ok := liveness.BodyInAttempt(r.Context()); !ok || limit != 12345 {
			t.Errorf("request %d: body in attempt %v, limit %d", i, ok, limit)
		}
		tr := liveness.From(r.Context())
		if tr == nil || (tracker != nil && tr != tracker) {
			t.Errorf("request %d does not share the walk's tracker", i)
		}
		tracker = tr
	}
	if got[0].Header.Get("X-Trace") != "t1" {
		t.Fatal("headers lost")
	}
	got[1].Header.Set("X-Trace", "changed by a transport")
	if req.Header.Get("X-Trace") != "t1" || got[2].Header.Get("X-Trace") != "t1" {
		t.Error("pages share header maps with each other or the caller")
	}
	if req.URL.String() != before.URL.String() || !reflect.DeepEqual(req.Header, before.Header) {
		t.Errorf("the caller's request changed: %v %v", req.URL, req.Header)
	}
}

func TestWalkUsesCallersTracker(t *testing.T) {
	t.Parallel()
	tr := liveness.New()
	tr.CountAttempt(true) // a retry before the walk is not the walk's
	var seen *liveness.Tracker
	rt := fakeAPI(3, func(r *http.Request, _ *http.Response) {
		seen = liveness.From(r.Context())
		seen.CountAttempt(false)
		seen.CountAttempt(true) // as a retrying transport would
	})
	req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
	w := paginate.NewWalk(countingClient(t, rt), req, paginate.Options{})
	if _, err := collect(w.All(liveness.With(context.Background(), tr))); err != nil {
		t.Fatal(err)
	}
	if seen != tr {
		t.Error("the walk did not use the tracker ctx carries")
	}
	if got := w.Summary().Retries; got != 3 {
		t.Errorf("Summary.Retries = %d, want 3", got)
	}
}

func TestWalkMarksProgressPerPage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := liveness.New()
		rt := fakeAPI(3, func(*http.Request, *http.Response) { time.Sleep(10 * time.Second) })
		time.Sleep(time.Minute)
		req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
		n := 0
		for p, err := range paginate.Pages(liveness.With(context.Background(), tr), &http.Client{Transport: rt}, req, paginate.Options{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if s := tr.Silence(); s != 0 {
				t.Errorf("page %d: silence %v after the page arrived, want 0", p.Number, s)
			}
		}
		if n != 3 {
			t.Errorf("%d pages, want 3", n)
		}
	})
}

func TestWalkSummaryRateLimit(t *testing.T) {
	t.Parallel()
	rt := fakeAPI(2, func(r *http.Request, resp *http.Response) {
		resp.Header.Set("X-RateLimit-Remaining", fmt.Sprint(100-pageNumber(r)))
		if pageNumber(r) == 2 {
			resp.Header.Set("RateLimit", "limit=100, remaining=98, reset=30")
			resp.Header.Set("RateLimit-Policy", "100;w=60")
		}
		resp.Header.Set("X-Unrelated", "1")
	})
	req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
	w := paginate.NewWalk(&http.Client{Transport: rt}, req, paginate.Options{})
	if _, err := collect(w.All(context.Background())); err != nil {
		t.Fatal(err)
	}
	want := http.Header{
		"X-Ratelimit-Remaining": {"98"},
		"Ratelimit":             {"limit=100, remaining=98, reset=30"},
		"Ratelimit-Policy":      {"100;w=60"},
	}
	if got := w.Summary().RateLimit; !reflect.DeepEqual(got, want) {
		t.Errorf("RateLimit = %v, want %v", got, want)
	}
}

func TestWalkReportsPages(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []event.Event
	rep := event.ReporterFunc(func(e event.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	})
	req, _ := http.NewRequest("GET", "https://api.example.gov/items?api_key=sekrit", nil)
	total := func(_ *http.Request, resp *http.Response) { resp.Header.Set("X-Total-Count", "2") }
	if _, err := collect(paginate.Pages(context.Background(), &http.Client{Transport: fakeAPI(2, total)}, req, paginate.Options{Reporter: rep})); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 {
		t.Fatalf("%d events, want 2", len(events))
	}
	for i, e := range events {
		if e.Kind != event.PageReceived || e.Done != i+1 || e.Items != 1 || e.Bytes != int64(len(itemsJSON(i+1, 1))) ||
			e.Time.IsZero() || e.Method != "GET" || e.TotalItems != 2 || e.Status != 200 || e.Host != "api.example.gov" {
			t.Errorf("event %d = %+v", i, e)
		}
		if strings.Contains(e.URL, "sekrit") || !strings.Contains(e.URL, "api.example.gov/items") {
			t.Errorf("event %d URL %q", i, e.URL)
		}
	}
}

func TestWalkCancel(t *testing.T) {
	t.Parallel()
	t.Run("between pages", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
		pages, err := collect(func(yield func(*paginate.Page, error) bool) {
			for p, err := range paginate.Pages(ctx, &http.Client{Transport: fakeAPI(5, nil)}, req, paginate.Options{}) {
				if p != nil && p.Number == 2 {
					cancel()
				}
				if !yield(p, err) {
					return
				}
			}
		})
		if !errors.Is(err, context.Canceled) || len(pages) != 2 {
			t.Errorf("%d pages, err %v; want 2 then context.Canceled", len(pages), err)
		}
	})
	t.Run("during a request", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if pageNumber(r) == 2 {
				cancel()
				<-r.Context().Done()
				return nil, r.Context().Err()
			}
			return fakeAPI(5, nil)(r)
		})
		req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
		pages, err := collect(paginate.Pages(ctx, &http.Client{Transport: rt}, req, paginate.Options{}))
		if err != context.Canceled || len(pages) != 1 {
			t.Errorf("%d pages, err %#v; want 1 then ctx's own error", len(pages), err)
		}
	})
}

func TestWalkReplaysRequestBody(t *testing.T) {
	t.Parallel()
	var bodies []string
	rt := fakeAPI(3, func(r *http.Request, _ *http.Response) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, r.Method+" "+string(b))
	})
	req, _ := http.NewRequest("POST", "https://api.example.gov/search", strings.NewReader(`{"q":"x"}`))
	if _, err := collect(paginate.Pages(context.Background(), &http.Client{Transport: rt}, req, paginate.Options{})); err != nil {
		t.Fatal(err)
	}
	if want := []string{`POST {"q":"x"}`, `POST {"q":"x"}`, `POST {"q":"x"}`}; !reflect.DeepEqual(bodies, want) {
		t.Errorf("bodies = %q, want %q", bodies, want)
	}

	req, _ = http.NewRequest("POST", "https://api.example.gov/search", io.NopCloser(strings.NewReader(`{}`)))
	pages, err := collect(paginate.Pages(context.Background(), &http.Client{Transport: fakeAPI(3, nil)}, req, paginate.Options{}))
	if !errors.Is(err, paginate.ErrOptions) || len(pages) != 1 {
		t.Errorf("a body without GetBody: %d pages, %v; want 1 then ErrOptions", len(pages), err)
	}
}

func TestWalkOptionErrors(t *testing.T) {
	t.Parallel()
	req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
	cases := []struct {
		name string
		req  *http.Request
		opt  paginate.Options
		want string
	}{
		{"no request", nil, paginate.Options{}, "no request"},
		{"credential cursor parameter", req, paginate.Options{Next: paginate.Cursor("next", "api_key")}, `"api_key" looks like a credential`},
		{"credential cursor parameter in other case", req, paginate.Options{Next: paginate.Cursor("next", "Access-Token")}, "looks like a credential"},
		{"cursor without parameter", req, paginate.Options{Next: paginate.Cursor("next", "")}, "needs both"},
		{"cursor path with empty key", req, paginate.Options{Next: paginate.Cursor("meta..next", "c")}, "empty key"},
		{"items path with empty key", req, paginate.Options{Items: "result."}, "empty key"},
		{"MaxRows without items", req, paginate.Options{Items: paginate.NoItems, MaxRows: 5}, "MaxRows"},
		{"negative cap", req, paginate.Options{MaxPages: -1}, "negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			called := false
			rt := roundTripFunc(func(r *http.Request) (*http.Response, error) { called = true; return fakeAPI(1, nil)(r) })
			pages, err := collect(paginate.Pages(context.Background(), &http.Client{Transport: rt}, c.req, c.opt))
			if !errors.Is(err, paginate.ErrOptions) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrOptions mentioning %q", err, c.want)
			}
			if len(pages) != 0 || called {
				t.Errorf("%d pages, request sent %v; want nothing", len(pages), called)
			}
		})
	}
}

// nextFunc is a custom strategy: the policy still applies to what it finds.
type nextFunc func(p *paginate.Page) (string, error)

func (f nextFunc) NextLink(p *paginate.Page) (string, error) { return f(p) }

func TestWalkCustomStrategyIsPoliced(t *testing.T) {
	t.Parallel()
	next := nextFunc(func(p *paginate.Page) (string, error) {
		if p.Number == 1 {
			return "?page=2", nil
		}
		return "https://evil.example/p3", nil
	})
	req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
	pages, err := collect(paginate.Pages(context.Background(), &http.Client{Transport: fakeAPI(0, nil)}, req, paginate.Options{Next: next}))
	if !errors.Is(err, paginate.ErrCrossHost) || len(pages) != 2 {
		t.Errorf("%d pages, %v; want 2 then ErrCrossHost", len(pages), err)
	}
	boom := errors.New("no idea where the next page is")
	pages, err = collect(paginate.Pages(context.Background(), &http.Client{Transport: fakeAPI(0, nil)}, req,
		paginate.Options{Next: nextFunc(func(*paginate.Page) (string, error) { return "", boom })}))
	var e *paginate.Error
	if !errors.Is(err, boom) || !errors.As(err, &e) || e.Page != 1 || len(pages) != 1 {
		t.Errorf("%d pages, %v; want 1 then the strategy's error about page 1", len(pages), err)
	}
}

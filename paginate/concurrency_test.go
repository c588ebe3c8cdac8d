package paginate_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/steadytest"
)

// 100,000 rows behind 20 ms a page: eight pages at a time take at least six
// times less virtual time than one at a time, and every row still comes
// once, in order. The other computed styles walk 20,000 rows the same way.
func TestConcurrentPagesAreFasterAndInOrder(t *testing.T) {
	for i, c := range styleCases {
		rows := 20_000
		if i == 0 {
			rows = 100_000
		}
		if c.server == steadytest.S3 || c.style == "range" || c.style == "offset:_start" {
			continue // not computable ahead, or one page
		}
		t.Run(c.name, func(t *testing.T) {
			elapsed := func(concurrency int) (time.Duration, int) {
				var d time.Duration
				var maxInFlight int
				synctest.Test(t, func(t *testing.T) {
					next, _ := paginate.ParseStyle(c.style)
					tr := &memTransport{h: styleHandler(t, c.server, rows, steadytest.Faults{}), latency: 20 * time.Millisecond}
					start := time.Now()
					got, w, err := walkIDs(t, &http.Client{Transport: tr}, mustRequest(t, "http://api.test/items"+c.query),
						paginate.Options{Next: next, Items: c.items, Concurrency: concurrency})
					d = time.Since(start)
					if err != nil {
						t.Fatal(err)
					}
					checkSequence(t, got, 1, rows)
					if s := w.Summary(); !s.Complete || s.Next != nil {
						t.Errorf("summary %+v", s)
					}
					maxInFlight = tr.max
				})
				return d, maxInFlight
			}
			seq, seqMax := elapsed(1)
			conc, concMax := elapsed(8)
			if seqMax != 1 || concMax != 8 {
				t.Errorf("at most %d and %d requests in flight, want 1 and 8", seqMax, concMax)
			}
			t.Logf("sequential %v, concurrent %v", seq, conc)
			if conc*6 > seq {
				t.Errorf("concurrent walk took %v, sequential %v: less than 6x faster", conc, seq)
			}
		})
	}
}

// On a real loopback server, a walk with Concurrency 8 has eight requests
// in flight at once, never more. Each request past the first waits until
// eight are in flight, so a walk that fetched fewer at once would hang.
func TestConcurrentPagesOnLoopback(t *testing.T) {
	h := styleHandler(t, steadytest.Offset, 5000, steadytest.Faults{})
	var mu sync.Mutex
	inFlight, most := 0, 0
	full := make(chan struct{})
	srv := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == 8 {
			select {
			case <-full:
			default:
				close(full)
			}
		}
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		if r.URL.Query().Has("_start") {
			select {
			case <-full:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	next, _ := paginate.ParseStyle("offset:_start:_limit")
	got, _, err := walkIDs(t, srv.Client(), mustRequest(t, srv.URL+"/items?_limit=100"),
		paginate.Options{Next: next, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	checkSequence(t, got, 1, 5000)
	if most != 8 {
		t.Errorf("at most %d requests in flight, want 8", most)
	}
}

// A page that fails while later ones are in flight ends the walk after the
// pages before it, and the resume point names it: resuming from there
// delivers the rest exactly. Breaking off names the first page not
// delivered the same way.
func TestConcurrentWalkResumesExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		faults := steadytest.Faults{Rule: func(c steadytest.Call) steadytest.Fault {
			if c.Offset == 1200 && c.Attempt == 1 {
				return steadytest.Fault{Kind: steadytest.Status, Status: 500}
			}
			return steadytest.Fault{}
		}}
		tr := &memTransport{h: styleHandler(t, steadytest.Offset, 3000, faults), latency: 20 * time.Millisecond}
		client := &http.Client{Transport: tr}
		opt := paginate.Options{Next: paginate.Offset("_start", "_limit"), Concurrency: 8}
		got, w, err := walkIDs(t, client, mustRequest(t, "http://api.test/items?_limit=100"), opt)
		if !errors.Is(err, paginate.ErrStatus) {
			t.Fatalf("err = %v, want the 500", err)
		}
		checkSequence(t, got, 1, 1200)
		s := w.Summary()
		if s.Next == nil || s.Next.Query().Get("_start") != "1200" {
			t.Fatalf("resume point %v, want _start=1200", s.Next)
		}
		rest, _, err := walkIDs(t, client, mustRequest(t, s.Next.String()), opt)
		if err != nil {
			t.Fatal(err)
		}
		checkSequence(t, rest, 1201, 3000)

		w = paginate.NewWalk(client, mustRequest(t, "http://api.test/items?_limit=100"), opt)
		n := 0
		for _, err := range w.All(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 5 {
				break
			}
		}
		if s := w.Summary(); s.Next == nil || s.Next.Query().Get("_start") != "500" || s.Items != 500 {
			t.Fatalf("after 5 pages: next %v, %d items", s.Next, s.Items)
		}
	})
}

// A Range walk resumes from its summary's Range header.
func TestRangeWalkResumePoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &memTransport{h: styleHandler(t, steadytest.Range, 1000, steadytest.Faults{}), latency: time.Millisecond}
		client := &http.Client{Transport: tr}
		opt := paginate.Options{Next: paginate.Range(100), Concurrency: 4, MaxPages: 3}
		got, w, err := walkIDs(t, client, mustRequest(t, "http://api.test/items"), opt)
		if err != nil {
			t.Fatal(err)
		}
		checkSequence(t, got, 1, 300)
		if tr.requests != 3 {
			t.Errorf("%d requests for 3 pages: pages past MaxPages were fetched", tr.requests)
		}
		s := w.Summary()
		if s.NextRange != "300-399" {
			t.Fatalf("NextRange = %q", s.NextRange)
		}
		req := mustRequest(t, s.Next.String())
		req.Header.Set("Range", s.NextRange)
		opt.MaxPages = 0
		rest, w, err := walkIDs(t, client, req, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkSequence(t, rest, 301, 1000)
		if !w.Summary().Complete {
			t.Error("incomplete")
		}
	})
}

// Options.Range resumes a Range walk as the header on the request does,
// with no header of the caller's: what a client that builds the request
// itself (steady.Client.Walk) needs. Any other style refuses it.
func TestRangeOptionResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &memTransport{h: styleHandler(t, steadytest.Range, 1000, steadytest.Faults{}), latency: time.Millisecond}
		client := &http.Client{Transport: tr}
		for _, conc := range []int{1, 4} {
			opt := paginate.Options{Next: paginate.Range(100), Concurrency: conc, Range: "300-399"}
			rest, w, err := walkIDs(t, client, mustRequest(t, "http://api.test/items"), opt)
			if err != nil {
				t.Fatal(err)
			}
			checkSequence(t, rest, 301, 1000)
			if s := w.Summary(); !s.Complete || s.Pages != 7 {
				t.Errorf("concurrency %d: summary %+v", conc, s)
			}
		}
		next, _ := paginate.ParseStyle("offset:_start:_limit")
		_, _, err := walkIDs(t, client, mustRequest(t, "http://api.test/items?_limit=10"), paginate.Options{Next: next, Range: "0-9"})
		if !errors.Is(err, paginate.ErrOptions) {
			t.Errorf("offset walk with Range: %v, want ErrOptions", err)
		}
	})
}

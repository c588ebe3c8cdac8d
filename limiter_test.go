package steady_test

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/internal/limitertest"
	"github.com/steadyhttp/steady/paginate"
)

// A page walk and a 32-way fan-out behind a real express-rate-limit that
// answers a bare 429 (no quota field, no Retry-After), 10 requests per
// second, with the facade's defaults: every row arrives, the breaker
// learns the window from the first run of 429s (10 a window, or 11 while
// it probes for one more, over at most an eighth more than the window plus
// a round trip's margin), and after that draws at most one 429 a window.
// What is asserted is what the breaker learned and the 429s it drew, not
// the wall time, which a loaded machine stretches: that is logged against
// the floor, and measured at 50 per 5 s by TestHeaderlessDefaults.
func TestHeaderless429sAreLearned(t *testing.T) {
	t.Parallel()
	lim := []limitertest.Limiter{{Limit: 10, WindowMs: 1000, Headers: "none"}}
	cases := []struct {
		name string
		rows int
		work func(ctx context.Context, c *steady.Client, url string) (int, error)
	}{
		{"walk", 41, walkRows},
		{"fan-out", 60, fanRows(60)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var learned []event.Event
			late := 0 // 429s drawn once a window was learned
			watch := event.ReporterFunc(func(e event.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case e.Kind == event.BreakerChanged && e.Reason == "limit" && e.Done > 0:
					learned = append(learned, e)
				case e.Kind == event.RetryScheduled && e.Status == 429 && len(learned) > 0:
					late++
				}
			})
			r := runHeaderless(t, tc.rows, lim, tc.work, watch)
			t.Logf("%s: %v", tc.name, r)
			if r.err != nil || r.done != tc.rows {
				t.Fatalf("%d rows of %d: %v", r.done, tc.rows, r.err)
			}
			if len(learned) == 0 {
				t.Fatal("no window learned")
			}
			for _, e := range learned {
				if e.Done > 11 || e.Wait < time.Second || e.Wait > 1125*time.Millisecond+250*time.Millisecond {
					t.Errorf("learned %d per %v, want at most 11 (10, and one probing) per 1s to 1.125s and a margin", e.Done, e.Wait)
				}
			}
			// A success still in flight when its window's 429 came may
			// leave the count one short for a window.
			if last := learned[len(learned)-1]; last.Done < 9 {
				t.Errorf("learned %d per %v at the end, want 10 (or one fewer, or one more probing)", last.Done, last.Wait)
			}
			if windows := int(r.elapsed/time.Second) + 1; late > windows {
				t.Errorf("%d 429s after the window was learned, over %d windows", late, windows)
			}
		})
	}
}

var headerlessRounds = flag.Int("headerless.rounds", 0,
	"rounds of TestHeaderlessDefaults (0 skips it): a walk and a 32-way fan-out behind a bare-429 express-rate-limit of 50 per 5 s, with the facade's defaults")

// headerlessRun is one client's run behind a headerless limiter.
type headerlessRun struct {
	elapsed, floor   time.Duration
	served, refused  int
	done             int
	err              error
	holds, backoffs  time.Duration
	retries, waiting int
}

func (r headerlessRun) String() string {
	return fmt.Sprintf("%d done in %v (%.3fx the floor %v), %d served, %d 429s, %d holds for %v, %d backoffs for %v, err %v",
		r.done, r.elapsed.Round(time.Millisecond), r.elapsed.Seconds()/r.floor.Seconds(), r.floor, r.served, r.refused,
		r.waiting, r.holds.Round(time.Millisecond), r.retries, r.backoffs.Round(time.Millisecond), r.err)
}

// runHeaderless starts a server behind lim, runs work with a client of the
// facade's default options (a Reporter added to count the waits) and
// returns what the server and the client saw.
func runHeaderless(t *testing.T, rows int, lim []limitertest.Limiter, work func(ctx context.Context, c *steady.Client, url string) (int, error), also ...event.Reporter) headerlessRun {
	srv := limitertest.Start(t, limitertest.Config{Rows: rows, Page: 1, Limiters: lim})
	var mu sync.Mutex
	var r headerlessRun
	rep := event.ReporterFunc(func(e event.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case event.Waiting:
			r.holds += e.Wait
			r.waiting++
		case event.RetryScheduled:
			r.backoffs += e.Wait
			r.retries++
		}
	})
	c := newClient(t, steady.Options{Reporter: event.Multi(append(also, rep)...)})
	// A run that has not ended in ten times the floor is stopped there.
	r.floor = limitertest.Floor(rows, lim)
	ctx, cancel := context.WithTimeout(context.Background(), 10*r.floor)
	defer cancel()
	start := time.Now()
	r.done, r.err = work(ctx, c, srv.URL+"/items")
	r.elapsed = time.Since(start)
	r.served, r.refused = srv.Stats(t)
	srv.Stop()
	return r
}

// walkRows walks every page of url, one row a page, and counts the rows.
func walkRows(ctx context.Context, c *steady.Client, url string) (int, error) {
	n := 0
	for p, err := range c.Pages(ctx, url+"?offset=0&limit=1", nil, paginate.Options{}) {
		if err != nil {
			return n, err
		}
		n += p.Items.Len()
	}
	return n, nil
}

// fanRows fetches rows rows one request each through the facade's fan-out
// (its default concurrency, 32) and counts those fetched.
func fanRows(rows int) func(ctx context.Context, c *steady.Client, url string) (int, error) {
	return func(ctx context.Context, c *steady.Client, items string) (int, error) {
		var n atomic.Int64
		err := c.FanOut(ctx, rows, func(ctx context.Context, i int) error {
			var page []struct{ ID int }
			if err := c.GetJSON(ctx, items, url.Values{"offset": {strconv.Itoa(i)}, "limit": {"1"}}, &page); err != nil {
				return err
			}
			n.Add(int64(len(page)))
			return nil
		})
		return int(n.Load()), err
	}
}

// TestHeaderlessDefaults measures a page walk and a 32-way fan-out behind
// a real express-rate-limit that answers a bare 429 (no quota field, no
// Retry-After), 50 requests per 5 s, with the facade's defaults: wall time
// against the floor the quota allows, and the 429s drawn. It is a
// measurement (about a minute a round), run by bench/headerless.sh beside
// the build it is compared with.
//
//	go test -run TestHeaderlessDefaults -headerless.rounds 1 -v .
func TestHeaderlessDefaults(t *testing.T) {
	if *headerlessRounds == 0 {
		t.Skip("run with -headerless.rounds N")
	}
	lim := []limitertest.Limiter{{Limit: 50, WindowMs: 5000, Headers: "none"}}
	const walkN, fanN = 151, 200
	for round := range *headerlessRounds {
		w := runHeaderless(t, walkN, lim, walkRows)
		t.Logf("round %d walk    %v", round, w)
		f := runHeaderless(t, fanN, lim, fanRows(fanN))
		t.Logf("round %d fan-out %v", round, f)
	}
}

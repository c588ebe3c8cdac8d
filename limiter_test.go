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
	"github.com/steadyhttp/steady/retry"
)

// A page walk behind a real express-rate-limit that answers a bare 429 (no
// quota field, no Retry-After), 50 requests per 5 s, under a policy for an
// API that names no wait (many re-sends, backoffs of at most a second):
// with overload control on, as the facade has it, the walk ends within
// 1.25x the least time the limit allows. The same walk without it is
// logged beside, with both 429 counts. Wall time, so a loaded machine
// shows in it; the margin is the window's overshoot of about one backoff.
func TestWalkBehindHeaderlessLimiter(t *testing.T) {
	t.Parallel()
	const rows = 101
	lim := []limitertest.Limiter{{Limit: 50, WindowMs: 5000, Headers: "none"}}
	floor := limitertest.Floor(rows, lim)
	for _, off := range []bool{false, true} {
		srv := limitertest.Start(t, limitertest.Config{Rows: rows, Page: 1, Limiters: lim})
		var holds, waits time.Duration
		rep := event.ReporterFunc(func(e event.Event) {
			switch e.Kind {
			case event.Waiting:
				holds += e.Wait
			case event.RetryScheduled:
				waits += e.Wait
			}
		})
		c := newClient(t, steady.Options{NoOverload: off, Reporter: rep, Policy: retry.Policy{MaxAttempts: 30, MaxBackoff: time.Second}})
		start := time.Now()
		n := 0
		var err error
		for p, perr := range c.Pages(context.Background(), srv.URL+"/items?offset=0&limit=1", nil, paginate.Options{}) {
			if perr != nil {
				err = perr
				break
			}
			n += len(p.Items)
		}
		elapsed := time.Since(start)
		served, refused := srv.Stats(t)
		srv.Stop()
		t.Logf("overload control off %v: %d rows in %v (%.3fx the floor %v), %d served, %d refused, holds %v, backoffs %v, err %v",
			off, n, elapsed.Round(time.Millisecond), elapsed.Seconds()/floor.Seconds(), floor, served, refused, holds, waits, err)
		if off {
			continue
		}
		if err != nil || n != rows {
			t.Fatalf("walk: %d rows of %d, %v", n, rows, err)
		}
		if elapsed > floor*125/100 {
			t.Errorf("walk took %v, over 1.25x the floor %v", elapsed.Round(time.Millisecond), floor)
		}
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
func runHeaderless(t *testing.T, rows int, lim []limitertest.Limiter, work func(ctx context.Context, c *steady.Client, url string) (int, error)) headerlessRun {
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
	c := newClient(t, steady.Options{Reporter: rep})
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
		n += len(p.Items)
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

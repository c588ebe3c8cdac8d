package steady_test

import (
	"context"
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
			n += p.Items.Len()
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

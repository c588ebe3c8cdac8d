package retry_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// A call sleeping off a backoff holds no slot, and queue time is credited:
// with one slot, a call queued for 50s behind another still gets its
// re-sends under a 10s stall budget.
func TestGatePerAttemptAndCredited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := semaphore.NewWeighted(1)
		var inFlight, maxInFlight atomic.Int32
		var slowAttempts, flakyAttempts atomic.Int32
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			if n > maxInFlight.Load() {
				maxInFlight.Store(n)
			}
			if r.URL.Path == "/slow" {
				slowAttempts.Add(1)
				time.Sleep(50 * time.Second)
				return respond(r, 200, nil, "ok"), nil
			}
			flakyAttempts.Add(1)
			return respond(r, 503, nil, ""), nil
		})
		tr := retry.New(inner, retry.Policy{MaxAttempts: 3, StallTimeout: 10 * time.Second, InitialBackoff: time.Millisecond, Rand: constRand(0)})
		ctx := retry.WithGate(t.Context(), gate)
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := tr.RoundTrip(get(ctx, "https://api.example.gov/slow"))
			if err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait() // the slow call holds the slot
		resp, err := tr.RoundTrip(get(ctx, "https://api.example.gov/flaky"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		<-done
		if got := flakyAttempts.Load(); got != 3 {
			t.Errorf("queued call made %d attempts, want 3: queue time must not count as silence", got)
		}
		if maxInFlight.Load() != 1 {
			t.Errorf("max attempts in flight = %d, want 1", maxInFlight.Load())
		}
	})
}

func TestPacingHoldsUntilReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){
			status(200, "RateLimit", `"default";r=0;t=20`),
			status(200, "RateLimit", `"default";r=99;t=60`),
		}}
		var waits []event.Event
		tr := retry.New(s, retry.Policy{Pacer: new(ratelimit.Pacer), Rand: constRand(0.5), Reporter: event.ReporterFunc(func(e event.Event) {
			if e.Kind == event.Waiting {
				waits = append(waits, e)
			}
		})})
		for range 2 {
			resp, err := tr.RoundTrip(get(t.Context(), api))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		// The reset itself: a lone held request has no one to wake apart
		// from, so it gets no jitter.
		if got := s.times[1].Sub(s.times[0]); got != 20*time.Second {
			t.Errorf("second request waited %v, want the 20s reset", got)
		}
		if len(waits) != 1 || waits[0].Reason != event.WaitRateLimited || waits[0].Wait != 20*time.Second {
			t.Errorf("waiting events = %+v", waits)
		}
		// Another host is not held.
		start := time.Now()
		resp, err := tr.RoundTrip(get(t.Context(), "https://other.example.gov/x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if time.Since(start) != 0 {
			t.Errorf("a different host waited %v", time.Since(start))
		}
	})
}

func TestPacingBeyondCapFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := spentQuota(t, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "3600")
		_, err := tr.RoundTrip(get(t.Context(), api))
		var re *retry.Error
		if !errors.Is(err, retry.ErrRateLimited) || !errors.As(err, &re) || re.Wait != time.Hour || s.attempts() != 1 {
			t.Fatalf("err = %v after %d attempts; want ErrRateLimited carrying the 1h wait, nothing sent", err, s.attempts())
		}
	})
}

func TestPacingRetryAfterTakesPrecedence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){
			status(429, "Retry-After", "2", "RateLimit", `"default";r=0;t=40`), status(200)}}
		tr := retry.New(s, retry.Policy{Pacer: new(ratelimit.Pacer), Rand: constRand(0.999999)})
		resp, err := tr.RoundTrip(get(t.Context(), api))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// The re-send waits the Retry-After (plus ~1µs of jitter), but the
		// quota still holds the host until its reset (plus ~1µs).
		if got := s.times[1].Sub(s.times[0]); got < 40*time.Second || got > 40*time.Second+time.Millisecond {
			t.Errorf("re-send after %v; want it held to the quota reset of 40s", got)
		}
	})
}

// Pacing is on by default (TestZeroPolicyPaces); NoPacing turns it off.
func TestPacingOffWithNoPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(200, "RateLimit", `"default";r=0;t=20`)}}
		tr := retry.New(s, retry.Policy{NoPacing: true})
		for range 2 {
			resp, err := tr.RoundTrip(get(t.Context(), api))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if got := s.times[1].Sub(s.times[0]); got != 0 {
			t.Errorf("unpaced transport waited %v", got)
		}
	})
}

// Requests held to one reset wake spread over a jitter sized to how many
// are held (10ms for each held before them), not together.
func TestPacingSpreadsHeldRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var first atomic.Bool
		var times []time.Duration
		var mu sync.Mutex
		start := time.Now()
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if first.CompareAndSwap(false, true) {
				return respond(r, 200, http.Header{"Ratelimit": {`"default";r=0;t=10`}}, ""), nil
			}
			mu.Lock()
			times = append(times, time.Since(start))
			mu.Unlock()
			return respond(r, 200, nil, ""), nil
		})
		tr := retry.New(inner, retry.Policy{Pacer: new(ratelimit.Pacer)}) // the default random source
		resp, err := tr.RoundTrip(get(t.Context(), api))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if resp, err := tr.RoundTrip(get(t.Context(), api)); err == nil {
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		distinct := map[time.Duration]bool{}
		for _, d := range times {
			if d < 10*time.Second || d > 10*time.Second+190*time.Millisecond {
				t.Errorf("a held request was sent at %v, want within [10s, 10.19s]", d)
			}
			distinct[d] = true
		}
		if len(distinct) < 15 {
			t.Errorf("20 held requests woke at only %d distinct instants", len(distinct))
		}
	})
}

// Cancelled while held by pacing: the context's own error, recorded in the
// outcome, nothing sent.
func TestPacingHoldCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := spentQuota(t, "RateLimit", `"default";r=0;t=30`)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		ctx, out := retry.WithOutcome(ctx)
		_, err := tr.RoundTrip(get(ctx, api))
		if !errors.Is(err, context.DeadlineExceeded) || s.attempts() != 1 || !errors.Is(out.Stop, context.DeadlineExceeded) {
			t.Fatalf("err %v, %d attempts, outcome %+v", err, s.attempts(), out)
		}
	})
}

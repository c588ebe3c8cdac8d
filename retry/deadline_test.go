package retry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// A wait that cannot end before the context's deadline is not started: the
// call returns at once with what it has, and says the deadline stopped it.
func TestWaitBeyondDeadlineIsNotStarted(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	cases := []struct {
		name     string
		step     func(*http.Request) (*http.Response, error)
		policy   retry.Policy
		response bool
	}{
		{"backoff after a 503", status(503), retry.Policy{InitialBackoff: 20 * time.Second, Rand: constRand(0)}, true},
		{"Retry-After under the cap", status(429, "Retry-After", "30"), retry.Policy{}, true},
		{"a spent quota's reset", status(429, "RateLimit", `"default";r=0;t=30`), retry.Policy{Pacer: new(ratelimit.Pacer)}, true},
		{"backoff after a reset connection", fail(reset), retry.Policy{InitialBackoff: 20 * time.Second, Rand: constRand(0)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{steps: []func(*http.Request) (*http.Response, error){c.step, status(200)}}
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				ctx, out := retry.WithOutcome(ctx)
				start := time.Now()
				resp, err := retry.New(s, c.policy).RoundTrip(get(ctx, api))
				if time.Since(start) != 0 || s.attempts() != 1 {
					t.Fatalf("returned after %v and %d attempts; want at once after one", time.Since(start), s.attempts())
				}
				if !errors.Is(out.Stop, retry.ErrDeadline) || !errors.Is(out.Stop, context.DeadlineExceeded) || out.Attempts != 1 {
					t.Errorf("outcome %+v; want stopped by the deadline after 1 attempt", out)
				}
				if c.response {
					if err != nil || resp == nil || resp.StatusCode == 200 {
						t.Fatalf("RoundTrip = %v, %v; want the last refusal as the response", resp, err)
					}
					resp.Body.Close()
					return
				}
				var re *retry.Error
				if resp != nil || !errors.As(err, &re) || !errors.Is(err, retry.ErrDeadline) ||
					!errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, syscall.ECONNRESET) || re.Attempts != 1 {
					t.Fatalf("RoundTrip = %v, %v; want a *retry.Error stopped by the deadline, caused by the reset", resp, err)
				}
				if !errors.Is(out.Cause, syscall.ECONNRESET) {
					t.Errorf("outcome cause %v; want the reset connection", out.Cause)
				}
			})
		})
	}
}

// A wait that fits before the deadline is taken.
func TestWaitWithinDeadlineIsTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(429, "Retry-After", "5"), status(200)}}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		resp, err := retry.New(s, retry.Policy{Rand: constRand(0)}).RoundTrip(get(ctx, api))
		if err != nil || resp.StatusCode != 200 || s.attempts() != 2 {
			t.Fatalf("RoundTrip = %v, %v after %d attempts", resp, err, s.attempts())
		}
		resp.Body.Close()
	})
}

// A pacing hold beyond the deadline sends nothing and says so; one beyond
// MaxRetryAfter says that instead.
func TestPacingHoldBeyondDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := spentQuota(t, "RateLimit", `"default";r=0;t=30`)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		ctx, out := retry.WithOutcome(ctx)
		start := time.Now()
		_, err := tr.RoundTrip(get(ctx, api))
		var re *retry.Error
		if !errors.As(err, &re) || !errors.Is(err, retry.ErrDeadline) || !errors.Is(err, context.DeadlineExceeded) ||
			re.Wait != 30*time.Second || s.attempts() != 1 || time.Since(start) != 0 || !errors.Is(out.Stop, retry.ErrDeadline) {
			t.Fatalf("err %v after %v, %d attempts, outcome %+v; want ErrDeadline at once, nothing sent", err, time.Since(start), s.attempts(), out)
		}
		// Refused, the hold reserved nothing: a call with time for it waits
		// the reset itself.
		resp, err := tr.RoundTrip(get(t.Context(), api))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := time.Since(start); got != 30*time.Second {
			t.Errorf("the next call waited %v, want the 30s reset", got)
		}
	})
}

// Rate limits answered as 403 (GitHub's secondary limits, or a spent
// quota) are waited out; a plain 403, or a firewall's with a Retry-After
// and no rate-limit field, is returned at once.
func TestForbiddenRateLimits(t *testing.T) {
	cases := []struct {
		name     string
		step     func(*http.Request) (*http.Response, error)
		attempts int
		wait     time.Duration
	}{
		{"secondary limit with Retry-After", status(403, "Retry-After", "2", "X-RateLimit-Remaining", "4990", "X-RateLimit-Resource", "core"), 2, 2 * time.Second},
		{"firewall block with Retry-After", status(403, "Retry-After", "3600"), 1, 0},
		{"firewall block with a short Retry-After", status(403, "Retry-After", "2"), 1, 0},
		{"spent quota without Retry-After", status(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "7"), 2, 7 * time.Second},
		{"plain 403", status(403), 1, 0},
		{"403 with a quota to spare", status(403, "X-RateLimit-Remaining", "10", "X-RateLimit-Reset", "7"), 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{steps: []func(*http.Request) (*http.Response, error){c.step, status(200)}}
				resp, err := retry.New(s, retry.Policy{Rand: constRand(0.999999)}).RoundTrip(get(t.Context(), api))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if s.attempts() != c.attempts {
					t.Fatalf("%d attempts, want %d", s.attempts(), c.attempts)
				}
				if c.attempts == 2 {
					if got := s.times[1].Sub(s.times[0]); got < c.wait || got > c.wait+time.Millisecond {
						t.Errorf("re-sent after %v, want the %v the server named", got, c.wait)
					}
				} else if resp.StatusCode != 403 {
					t.Errorf("status %d, want the 403 itself", resp.StatusCode)
				}
			})
		})
	}
	plain := &http.Response{StatusCode: 403, Header: http.Header{}}
	limited := &http.Response{StatusCode: 403, Header: http.Header{"Retry-After": {"60"}, "X-Ratelimit-Used": {"90"}}}
	blocked := &http.Response{StatusCode: 403, Header: http.Header{"Retry-After": {"60"}}}
	if ratelimit.IsRateLimit(plain) || ratelimit.IsRateLimit(blocked) || !ratelimit.IsRateLimit(limited) || !ratelimit.IsRateLimit(&http.Response{StatusCode: 429}) {
		t.Error("IsRateLimit tells a plain 403 from a rate limit wrongly")
	}
}

// A re-send takes its pacing slot before its response is discarded: a hold
// the deadline would cut short ends the call with that response.
func TestResendHoldBeyondDeadlineKeepsTheResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &ratelimit.Pacer{}
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			// Another client of the same quota spends it meanwhile.
			shared.Observe(r.URL.Host, ratelimit.Route(r.URL.Path), ratelimit.Quota{Remaining: 0, Reset: 30 * time.Second}, time.Now(), time.Now())
			return respond(r, 503, nil, "busy"), nil
		})
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		ctx, out := retry.WithOutcome(ctx)
		start := time.Now()
		resp, err := retry.New(inner, retry.Policy{Pacer: shared, Rand: constRand(0)}).RoundTrip(get(ctx, api))
		if err != nil || resp.StatusCode != 503 || time.Since(start) != 0 {
			t.Fatalf("RoundTrip = %v, %v after %v; want the 503 at once", resp, err, time.Since(start))
		}
		resp.Body.Close()
		if !errors.Is(out.Stop, retry.ErrDeadline) || out.Attempts != 1 {
			t.Errorf("outcome %+v; want stopped by the deadline after 1 attempt", out)
		}
		// Refused, the hold reserved nothing.
		if h := shared.Hold("api.example.gov", "", start, time.Minute); h.Wait != 30*time.Second || h.Jitter != 0 {
			t.Errorf("the next hold: %+v, want the 30s reset with nothing queued before it", h)
		}
	})
}

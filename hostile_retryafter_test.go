package steady_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/retry"
)

// Retry-After values a server may send, through the whole client, in
// virtual time: the waits below are exact, not measured.

// retryAfterServer answers 429 with the Retry-After of header() to the
// first `refusals` requests and {} afterwards.
// retryAfterRun serves refusals answers carrying header's Retry-After over
// in-memory connections, then sends one GetJSON through a client with policy,
// inside the caller's synctest bubble. It returns when each attempt
// arrived, the events reported, and the error.
func retryAfterRun(t *testing.T, refusals int, header func() string, policy retry.Policy) (*arrivals, *hostileEvents, error) {
	t.Helper()
	arr, events := &arrivals{}, &hostileEvents{}
	mn := newMemNet(retryAfterServer(arr, refusals, header))
	t.Cleanup(mn.shutdown)
	cl := newClient(t, steady.Options{Transport: mn.tr, Reporter: events, Policy: policy})
	err := cl.GetJSON(context.Background(), "http://api.test/items", nil, new(any))
	return arr, events, err
}

func retryAfterServer(arr *arrivals, refusals int, header func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arr.add() <= refusals {
			w.Header().Set("Retry-After", header())
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":"slow down"}`)
			return
		}
		io.WriteString(w, `{}`)
	})
}

func TestHostileRetryAfterHuge(t *testing.T) {
	cases := []struct {
		name   string
		header func(now time.Time) string
		want   func(now time.Time) time.Duration
	}{
		{"seconds, thirty years",
			func(time.Time) string { return "999999999" },
			func(time.Time) time.Duration { return 999999999 * time.Second }},
		{"seconds, thirty thousand years",
			func(time.Time) string { return "999999999999" },
			func(time.Time) time.Duration { return math.MaxInt64 }},
		{"seconds beyond a Duration",
			func(time.Time) string { return "99999999999999999999999" },
			func(time.Time) time.Duration { return math.MaxInt64 }},
		{"decimal seconds beyond a Duration",
			func(time.Time) string { return "9999999999999.5" },
			func(time.Time) time.Duration { return math.MaxInt64 }},
		{"IMF date ten years ahead",
			func(now time.Time) string { return now.AddDate(10, 0, 0).UTC().Format(http.TimeFormat) },
			func(now time.Time) time.Duration { return now.AddDate(10, 0, 0).Sub(now) }},
		{"asctime date in the year 9999",
			func(time.Time) string { return "Fri Dec 31 23:59:59 9999" },
			func(now time.Time) time.Duration {
				return time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Sub(now)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				arr, events, err := retryAfterRun(t, 100, func() string { return c.header(start) },
					retry.Policy{MaxAttempts: 5})

				var rl *steady.RateLimitError
				if !errors.As(err, &rl) || !errors.Is(err, retry.ErrRetryAfter) {
					t.Fatalf("GetJSON: %v, want a *RateLimitError stopped by ErrRetryAfter", err)
				}
				if want := c.want(start); rl.RetryAfter() != want {
					t.Errorf("RetryAfter = %v, want the server's %v", rl.RetryAfter(), want)
				}
				if rl.StatusCode != http.StatusTooManyRequests || rl.Attempts != 1 || arr.count() != 1 {
					t.Errorf("status %d after %d attempts (server saw %d); want the 429 surfaced after one",
						rl.StatusCode, rl.Attempts, arr.count())
				}
				if slept := time.Since(start); slept != 0 {
					t.Errorf("the client slept %v before giving up; want no wait at all", slept)
				}
				stops := events.kind(event.Stopped)
				if len(stops) != 1 || stops[0].Wait != c.want(start) || len(events.kind(event.RetryScheduled)) != 0 {
					t.Errorf("events: %d stops (%+v), %d retries; want one stop carrying the wait",
						len(stops), stops, len(events.kind(event.RetryScheduled)))
				}
			})
		})
	}
}

func TestHostileRetryAfterNegative(t *testing.T) {
	// A negative hint means 0, and a hint of 0 still gets the jitter of
	// ADR 0160: U(0, 50ms] for a hint that short. With Rand fixed at 0.25
	// the wait is exactly 37.5ms, never an immediate re-send.
	for _, value := range []string{"-5", "-0.5", "-99999999999999999999", "0"} {
		t.Run(value, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				arr, events, err := retryAfterRun(t, 1, func() string { return value },
					retry.Policy{MaxAttempts: 3, Rand: func() float64 { return 0.25 }})
				if err != nil {
					t.Fatalf("GetJSON: %v, want the second attempt to succeed", err)
				}
				const want = 37500 * time.Microsecond
				if g := arr.gaps(); len(g) != 1 || g[0] != want {
					t.Errorf("gaps between attempts %v, want one of %v", g, want)
				}
				r := events.kind(event.RetryScheduled)
				if len(r) != 1 || r[0].Wait != want || r[0].Reason != event.WaitServerHint {
					t.Errorf("retry events %+v, want one server-hint wait of %v", r, want)
				}
			})
		})
	}
}

func TestHostileRetryAfterPast(t *testing.T) {
	// A date already past is no hint (clock skew is likelier than "now"):
	// the waits are the ordinary backoff, U(0, 100ms·2^(n-1)], exactly 50ms
	// then 100ms with Rand at 0.5, and the 429 that remains carries no wait.
	cases := []struct {
		name   string
		header func(now time.Time) string
	}{
		{"the epoch", func(time.Time) string { return "Thu, 01 Jan 1970 00:00:00 GMT" }},
		{"RFC 850 date of 1994", func(time.Time) string { return "Sunday, 06-Nov-94 08:49:37 GMT" }},
		{"one second ago", func(now time.Time) string { return now.Add(-time.Second).UTC().Format(http.TimeFormat) }},
		{"now", func(now time.Time) string { return now.UTC().Format(http.TimeFormat) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				arr, events, err := retryAfterRun(t, 100, func() string { return c.header(start) },
					retry.Policy{MaxAttempts: 3, InitialBackoff: 100 * time.Millisecond,
						Rand: func() float64 { return 0.5 }})

				var rl *steady.RateLimitError
				if !errors.As(err, &rl) || !errors.Is(err, retry.ErrExhausted) || rl.Attempts != 3 || rl.RetryAfter() != 0 {
					t.Fatalf("GetJSON: %#v, want a *RateLimitError after 3 attempts with no wait hint", err)
				}
				want := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}
				if g := arr.gaps(); len(g) != 2 || g[0] != want[0] || g[1] != want[1] {
					t.Errorf("gaps between attempts %v, want the backoff %v", g, want)
				}
				for _, e := range events.kind(event.RetryScheduled) {
					if e.Reason != event.WaitBackoff {
						t.Errorf("retry event %+v: reason %q, want %q", e, e.Reason, event.WaitBackoff)
					}
				}
			})
		})
	}
}

package simulate

import (
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// The simulator models the transport's waits with copies of its formulas
// (waits.go). This holds the copies to the transport itself: the gaps a real
// retry.Transport leaves between attempts, in virtual time, for a fixed
// random draw, are the ones delay and serverWait compute. A change to the
// transport's waits that is not made here too fails this test.
func TestWaitsAreTheTransports(t *testing.T) {
	for _, c := range []struct {
		name string
		hint time.Duration // Retry-After of every 503; 0: none, the backoff
		p    retry.Policy
	}{
		{"backoff, defaults", 0, retry.Policy{}},
		{"backoff, capped", 0, retry.Policy{InitialBackoff: 300 * time.Millisecond, MaxBackoff: 2 * time.Second}},
		{"server hint", 3 * time.Second, retry.Policy{}},
		{"server hint above the jitter cap", 30 * time.Second, retry.Policy{MaxBackoff: 500 * time.Millisecond}},
	} {
		for _, r := range []float64{0, 0.37, 0.999} {
			t.Run(c.name+"/r="+strconv.FormatFloat(r, 'f', -1, 64), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var sent []time.Time
					next := roundTripFunc(func(req *http.Request) (*http.Response, error) {
						sent = append(sent, time.Now())
						h := http.Header{}
						if c.hint > 0 {
							h.Set("Retry-After", strconv.Itoa(int(c.hint/time.Second)))
						}
						return &http.Response{StatusCode: 503, Header: h, Body: http.NoBody, Request: req}, nil
					})
					p := c.p
					p.MaxAttempts, p.StallTimeout, p.NoPacing = 6, -1, true
					p.MaxRetryAfter = time.Minute
					p.Rand = func() float64 { return r }
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example.gov/x", nil)
					resp, err := retry.New(next, p).RoundTrip(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if len(sent) != 6 {
						t.Fatalf("%d attempts, want 6", len(sent))
					}
					for n := 1; n < len(sent); n++ {
						want := delay(c.p, JitterFull, n, 0, r)
						if c.hint > 0 {
							want = serverWait(p, c.hint, r)
						}
						if got := sent[n].Sub(sent[n-1]); got != want {
							t.Errorf("wait before attempt %d: the transport %v, the simulator %v", n+1, got, want)
						}
					}
				})
			})
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

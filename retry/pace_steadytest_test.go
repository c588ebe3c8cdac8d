package retry_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/steadytest"
)

// Pacing against the test server's quota, in every header form it sends:
// a paced client is never refused, and waits out each window instead.
func TestPacingAgainstSteadytestQuota(t *testing.T) {
	forms := []struct {
		name    string
		headers steadytest.QuotaHeaders
		epoch   bool
	}{
		{"X-RateLimit", steadytest.XRateLimit, false},
		{"X-RateLimit epoch reset", steadytest.XRateLimit, true},
		{"RateLimit split", steadytest.RateLimitSplit, false},
		{"RateLimit combined", steadytest.RateLimitCombined, false},
		{"RateLimit structured", steadytest.RateLimitStructured, false},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, err := steadytest.NewHandler(steadytest.ServerOptions{Rows: 100, Faults: steadytest.Faults{
					Quota: steadytest.Quota{Limit: 5, Window: 10 * time.Second, Headers: f.headers, EpochReset: f.epoch}}})
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, r)
					return rec.Result(), nil
				})
				paced := retry.New(inner, retry.Policy{Pacer: new(ratelimit.Pacer)})
				start := time.Now()
				for i := range 12 {
					resp, err := paced.RoundTrip(get(t.Context(), "http://127.0.0.1/items?limit=1&offset="+itoa(i)))
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != 200 {
						t.Fatalf("request %d: %d", i, resp.StatusCode)
					}
				}
				for _, r := range h.Requests() {
					if r.Fault.Kind == steadytest.QuotaExceeded {
						t.Fatalf("a paced request was refused by the quota: %+v", r)
					}
				}
				// 12 requests at 5 a window: two resets waited out, about 20s.
				if got := time.Since(start); got < 19*time.Second || got > 22*time.Second {
					t.Errorf("12 paced requests took %v, want about two windows", got)
				}
			})
		})
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

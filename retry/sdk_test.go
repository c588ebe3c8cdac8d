package retry_test

import (
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// spentOnce answers 200 with a quota spent until reset.
func spentOnce(reset time.Duration) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		h := http.Header{"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset": {strconv.FormatInt(time.Now().Add(reset).Unix(), 10)}}
		return respond(r, 200, h, "{}"), nil
	}
}

// The zero policy paces, as the command does: after a 200 that says the
// quota is spent, the next request waits for the reset instead of drawing
// a 429 from an empty window.
func TestZeroPolicyPaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := retry.New(spentOnce(10*time.Second), retry.Policy{})
		roundTripOK(t, tr)
		start := time.Now()
		roundTripOK(t, tr)
		if d := time.Since(start); d < 9*time.Second {
			t.Errorf("the second request waited %v, want the quota's reset (about 10s)", d)
		}
	})
}

// NoPacing and a Pacer contradict each other.
func TestNoPacingWithPacerIsInvalid(t *testing.T) {
	err := retry.Policy{NoPacing: true, Pacer: new(ratelimit.Pacer)}.Validate()
	if err == nil {
		t.Fatal("Validate accepted NoPacing with a Pacer")
	}
}

func roundTripOK(t *testing.T, tr http.RoundTripper) {
	t.Helper()
	resp, err := tr.RoundTrip(get(t.Context(), "https://api.example.com/items"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

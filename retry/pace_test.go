package retry_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// A named quota holds only the requests on the routes that drew it:
// GitHub's search bucket spent leaves core calls alone.
func TestPacerNamedQuotaHoldsItsRoutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{"X-Ratelimit-Resource": {"core"}, "X-Ratelimit-Remaining": {"4999"},
				"X-Ratelimit-Reset": {strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)}}
			if ratelimit.Route(r.URL.Path) == "search" {
				h = http.Header{"X-Ratelimit-Resource": {"search"}, "X-Ratelimit-Remaining": {"0"},
					"X-Ratelimit-Reset": {strconv.FormatInt(time.Now().Add(10*time.Second).Unix(), 10)}}
			}
			return respond(r, 200, h, "{}"), nil
		})
		tr := retry.New(inner, retry.Policy{Pacer: new(ratelimit.Pacer)})
		do := func(path string) time.Duration {
			start := time.Now()
			resp, err := tr.RoundTrip(get(t.Context(), "https://api.github.com"+path))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return time.Since(start)
		}
		do("/search/issues?q=a")
		if d := do("/repos/o/r"); d != 0 {
			t.Errorf("a core call waited %v after the search bucket was spent", d)
		}
		if d := do("/search/issues?q=b"); d < 9*time.Second || d > 10*time.Second {
			t.Errorf("a search call waited %v, want the search bucket's reset", d)
		}
	})
}

// Two transports given one Pacer pace as one client: the second is held by
// the quota the first spent, and neither is refused.
func TestSharedPacerPacesTwoTransportsAsOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		remaining, windowEnd := 3, time.Now().Add(10*time.Second)
		refused := 0
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			if now := time.Now(); !now.Before(windowEnd) {
				remaining, windowEnd = 3, now.Add(10*time.Second)
			}
			if remaining == 0 {
				refused++
				return respond(r, 429, http.Header{"Ratelimit": {`r=0;t=` + strconv.Itoa(int(time.Until(windowEnd).Seconds()+0.999))}}, ""), nil
			}
			remaining--
			reset := strconv.Itoa(int(time.Until(windowEnd).Seconds() + 0.999))
			return respond(r, 200, http.Header{"Ratelimit": {"r=" + strconv.Itoa(remaining) + ";t=" + reset}}, ""), nil
		})
		shared := &ratelimit.Pacer{}
		a := retry.New(inner, retry.Policy{Pacer: shared})
		b := retry.New(inner, retry.Policy{Pacer: shared})
		for i := range 9 {
			tr := a
			if i%2 == 1 {
				tr = b
			}
			resp, err := tr.RoundTrip(get(t.Context(), api))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("request %d: %d", i, resp.StatusCode)
			}
		}
		if refused != 0 {
			t.Errorf("%d requests refused; transports sharing a pacer should be held, not refused", refused)
		}
	})
}

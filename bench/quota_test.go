package bench

import (
	"encoding/json"
	"flag"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/internal/limitertest"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

var quotaRounds = flag.Int("quota.rounds", 0, "rounds of TestQuotaEdge (0 skips it): each walks the same collection behind express-rate-limit with each client, interleaved")

// TestQuotaEdge walks one collection behind a real express-rate-limit with
// steady's paced transport and with a naive go-retryablehttp loop (its
// defaults: a 429 is re-sent after its Retry-After), in every header form,
// interleaved round by round against a fresh server each time, and reports
// the median wall time of each against the quota's floor, and the 429s
// each drew, and for steady the median time its pacer held requests (the
// figure a loaded machine does not swing).
//
//	go -C bench test -run TestQuotaEdge -quota.rounds 3 -v
func TestQuotaEdge(t *testing.T) {
	if *quotaRounds == 0 {
		t.Skip("run with -quota.rounds N")
	}
	const rows, limit, windowMs = 61, 20, 2000
	floor := time.Duration((rows-1)/limit) * windowMs * time.Millisecond
	var held atomic.Int64 // what steady's pacer held in the current walk
	clients := []struct {
		name string
		new  func() *http.Client
	}{
		{"steady (Pace, Reporter)", func() *http.Client {
			rep := event.ReporterFunc(func(ev event.Event) {
				if ev.Kind == event.Waiting && ev.Reason == event.WaitRateLimited {
					held.Add(int64(ev.Wait))
				}
			})
			return &http.Client{Transport: retry.New(newInner(), retry.Policy{Pacer: new(ratelimit.Pacer), Reporter: rep})}
		}},
		{"go-retryablehttp", func() *http.Client {
			c := retryablehttp.NewClient()
			c.Logger = nil
			c.HTTPClient.Transport = newInner()
			return c.StandardClient()
		}},
	}
	for _, form := range []string{"draft-6", "draft-7", "draft-8", "legacy"} {
		times := make([][]time.Duration, len(clients))
		var holds []time.Duration
		refused := make([]int, len(clients))
		for range *quotaRounds {
			for i, c := range clients {
				srv := limitertest.Start(t, limitertest.Config{Rows: rows, Page: 1,
					Limiters: []limitertest.Limiter{{Limit: limit, WindowMs: windowMs, Headers: form}}})
				held.Store(0)
				start := time.Now()
				got := walk(t, c.new(), srv.URL+"/items?offset=0&limit=1")
				times[i] = append(times[i], time.Since(start))
				if i == 0 {
					holds = append(holds, time.Duration(held.Load()))
				}
				if got != rows {
					t.Errorf("%s %s: %d rows, want %d", form, c.name, got, rows)
				}
				_, r := srv.Stats(t)
				refused[i] += r
				srv.Stop()
			}
		}
		for i, c := range clients {
			m := median(times[i])
			t.Logf("%-8s %-24s median %v (%.3fx the %v floor), %d 429s in %d walks",
				form, c.name, m.Round(time.Millisecond), m.Seconds()/floor.Seconds(), floor, refused[i], *quotaRounds)
		}
		h := median(holds)
		t.Logf("%-8s %-24s held median %v (%.3fx the floor)", form, clients[0].name, h.Round(time.Millisecond), h.Seconds()/floor.Seconds())
	}
}

// walk follows the Link rel="next" of each page, counting rows.
func walk(t *testing.T, c *http.Client, next string) int {
	t.Helper()
	n := 0
	for next != "" {
		resp, err := c.Get(next)
		if err != nil {
			t.Fatal(err)
		}
		var page []json.RawMessage
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", next, resp.StatusCode, err)
		}
		n += len(page)
		next = ""
		if l := resp.Header.Get("Link"); l != "" {
			if ref, _, ok := strings.Cut(strings.TrimPrefix(l, "<"), ">"); ok {
				next = resp.Request.URL.ResolveReference(mustParse(t, ref)).String()
			}
		}
	}
	return n
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func mustParse(t *testing.T, ref string) *url.URL {
	u, err := url.Parse(ref)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

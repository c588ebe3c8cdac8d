package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/failsafehttp"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/internal/limitertest"
)

var headerlessBeside = flag.Bool("headerless.beside", false,
	"run TestHeaderlessBeside: a walk and a 32-way fan-out behind a bare-429 express-rate-limit, steady beside failsafe-go")

// TestHeaderlessBeside sets steady's facade with its defaults beside
// failsafe-go's default HTTP retry policy (with its circuit breaker at its
// documented defaults, told that a 5xx is a failure as in
// TestOverloadBeside) behind a real express-rate-limit that answers a bare
// 429, 50 requests per 5 s: a walk of 151 one-row pages following Link,
// and 200 one-row requests 32 at a time. Each run has a fresh server and
// is stopped at ten times its floor; it reports the wall time against the
// floor, the rows fetched and the 429s drawn.
//
//	go -C bench test -run TestHeaderlessBeside -headerless.beside -v
func TestHeaderlessBeside(t *testing.T) {
	if !*headerlessBeside {
		t.Skip("run with -headerless.beside")
	}
	lim := []limitertest.Limiter{{Limit: 50, WindowMs: 5000, Headers: "none"}}
	contenders := []struct {
		name string
		new  func() *http.Client
	}{
		{"steady (defaults)", func() *http.Client {
			c, err := steady.New(steady.Options{Transport: newInner()})
			if err != nil {
				t.Fatal(err)
			}
			return c.HTTP()
		}},
		{"failsafe-go retry + circuit breaker", func() *http.Client {
			cb := circuitbreaker.NewBuilder[*http.Response]().HandleIf(serverFailure).Build()
			return &http.Client{Transport: failsafehttp.NewRoundTripper(newInner(), failsafehttp.NewRetryPolicyBuilder().Build(), cb)}
		}},
	}
	works := []struct {
		name string
		rows int
		run  func(ctx context.Context, c *http.Client, base string, rows int) int
	}{
		{"walk", 151, headerlessWalk},
		{"32-way fan-out", 200, headerlessFan},
	}
	for _, w := range works {
		floor := limitertest.Floor(w.rows, lim)
		for _, c := range contenders {
			srv := limitertest.Start(t, limitertest.Config{Rows: w.rows, Page: 1, Limiters: lim})
			ctx, cancel := context.WithTimeout(context.Background(), 10*floor)
			start := time.Now()
			got := w.run(ctx, c.new(), srv.URL+"/items", w.rows)
			elapsed := time.Since(start)
			cancel()
			served, refused := srv.Stats(t)
			srv.Stop()
			t.Logf("%-15s %-36s %3d of %d rows in %8v (%.3fx the floor %v), %d served, %d 429s",
				w.name, c.name, got, w.rows, elapsed.Round(time.Millisecond), elapsed.Seconds()/floor.Seconds(), floor, served, refused)
		}
	}
}

// getRows fetches one page and returns its rows and its next link; 0 rows
// and "" when the call failed or did not answer 200.
func getRows(ctx context.Context, c *http.Client, url string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, ""
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	var page []json.RawMessage
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&page) != nil {
		return 0, ""
	}
	next := ""
	if l := resp.Header.Get("Link"); l != "" {
		if ref, _, ok := strings.Cut(strings.TrimPrefix(l, "<"), ">"); ok {
			if u, err := resp.Request.URL.Parse(ref); err == nil {
				next = u.String()
			}
		}
	}
	return len(page), next
}

// headerlessWalk follows the pages from the first, and stops at the first
// page that fails, as a harvest does.
func headerlessWalk(ctx context.Context, c *http.Client, base string, rows int) int {
	n, next := 0, base+"?offset=0&limit=1"
	for next != "" {
		got, link := getRows(ctx, c, next)
		if got == 0 {
			break
		}
		n, next = n+got, link
	}
	return n
}

// headerlessFan fetches each row with its own request, 32 at a time, each
// failed request given up (the fan-out's caller would see it failed).
func headerlessFan(ctx context.Context, c *http.Client, base string, rows int) int {
	var n atomic.Int64
	var wg sync.WaitGroup
	slots := make(chan struct{}, 32)
	for i := range rows {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			got, _ := getRows(ctx, c, fmt.Sprintf("%s?offset=%s&limit=1", base, strconv.Itoa(i)))
			n.Add(int64(got))
		})
	}
	wg.Wait()
	return int(n.Load())
}

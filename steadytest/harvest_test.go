package steadytest_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/steadyhttp/steady/steadytest"
)

// TestHarshHarvestFitsInAMinute harvests what steady demo harvests, 100,000
// rows at 1,000 a page through Harsh, with a deliberately plain retry loop
// (a 1.5s limit per attempt, 200ms between attempts, Retry-After obeyed),
// in virtual time. It checks that the preset's waits add up to well under a
// minute even for an unsophisticated client, and that every row arrives.
func TestHarshHarvestFitsInAMinute(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 10 MB through the handler")
	}
	opt := steadytest.ServerOptions{Rows: 100_000, Faults: steadytest.Harsh(1)}
	inBubble(t, opt, func(t *testing.T, h *steadytest.Handler, c *http.Client) {
		start := time.Now()
		next, attempts := pageURL+"?limit=1000", 0
		seen := 0
		for next != "" {
			attempts++
			if attempts > 1000 {
				t.Fatal("too many attempts")
			}
			resp, body, err := attempt(c, next, 1500*time.Millisecond)
			if err != nil || resp.StatusCode != http.StatusOK {
				wait := 200 * time.Millisecond
				if resp != nil {
					if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
						wait = time.Duration(s) * time.Second
					} else if d, err := http.ParseTime(resp.Header.Get("Retry-After")); err == nil {
						wait = time.Until(d)
					}
				}
				time.Sleep(wait)
				continue
			}
			var rows []steadytest.Row
			decode(t, body, &rows)
			for _, r := range rows {
				if seen++; r.ID != seen {
					t.Fatalf("row %d has id %d", seen, r.ID)
				}
			}
			next = nextFromLink(resp.Header)
		}
		elapsed := time.Since(start)
		if seen != 100_000 {
			t.Fatalf("harvested %d rows", seen)
		}
		faults := map[steadytest.FaultKind]int{}
		for _, r := range h.Requests() {
			faults[r.Fault.Kind]++
		}
		t.Logf("%d attempts for 100 pages in %v of virtual time; faults %v", attempts, elapsed, faults)
		if elapsed > 45*time.Second {
			t.Errorf("the harvest took %v of virtual time, want well under a minute", elapsed)
		}
		if attempts-100 < 15 {
			t.Errorf("only %d failed attempts: Harsh is not harsh", attempts-100)
		}
	})
}

// attempt sends one GET bounded by limit and reads the whole body.
func attempt(c *http.Client, url string, limit time.Duration) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

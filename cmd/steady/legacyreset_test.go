package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/limitertest"
)

// A harvest behind express-rate-limit's legacy fields (X-RateLimit-Reset in
// whole Unix seconds, windows that begin at their first request): the pacer
// probes a window's last unit at its refined end, learns the windows begin
// at their first request, and holds no later than each window's end, so
// its holds stay within 1.02x the quota's floor rather than a second a
// window over it (ADR 0364); nothing is refused.
func TestHarvestLegacyResetsHeldToTheFloor(t *testing.T) {
	t.Parallel()
	const rows = 61
	for _, ra := range []bool{true, false} {
		l := limitertest.Limiter{Limit: 20, WindowMs: 2000, Headers: "legacy", RetryAfter: &ra}
		t.Run(l.String(), func(t *testing.T) {
			floor, held, holds := harvestPaced(t, rows, []limitertest.Limiter{l})
			if holds == 0 || held > floor*102/100 {
				t.Errorf("held %d requests for %v in all; want some, for at most %v (1.02x the floor)", holds, held, floor*102/100)
			}
		})
	}
}

// clockLimiter serves rows one a page behind fixed windows on clock
// seconds (a window of two seconds begins on every even Unix second), with
// X-RateLimit-* fields naming the window's end, and refuses a request over
// the limit with a 429.
type clockLimiter struct {
	rows, limit int
	window      int64 // seconds

	mu              sync.Mutex
	period          int64
	used            int
	served, refused int
}

func (c *clockLimiter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	c.mu.Lock()
	if k := now.Unix() / c.window; k != c.period {
		c.period, c.used = k, 0
	}
	c.used++
	over, remaining, reset := c.used > c.limit, max(c.limit-c.used, 0), (c.period+1)*c.window
	if over {
		c.refused++
	} else {
		c.served++
	}
	c.mu.Unlock()
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(c.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
	if over {
		h.Set("Retry-After", strconv.FormatInt(max(reset-now.Unix(), 1), 10))
		http.Error(w, "too many requests", http.StatusTooManyRequests)
		return
	}
	offset, err := strconv.Atoi(r.URL.Query().Get("offset"))
	if err != nil || offset < 0 || offset >= c.rows {
		http.Error(w, "bad offset", http.StatusBadRequest)
		return
	}
	if offset+1 < c.rows {
		h.Set("Link", fmt.Sprintf(`</items?offset=%d>; rel="next"`, offset+1))
	}
	h.Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode([]map[string]int{{"id": offset + 1}})
}

// A harvest behind a limiter whose windows reset on clock seconds: the
// probe of a window's last unit is answered from the same window, so the
// pacer learns the named second is the reset and waits for it; no request
// is refused, where refining the reset by the window's first request would
// wake each window up to a second early.
func TestHarvestBehindAClockSecondLimiter(t *testing.T) {
	t.Parallel()
	const rows = 41
	c := &clockLimiter{rows: rows, limit: 10, window: 2}
	srv := httptest.NewServer(c)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := cli(t, "harvest", "-v", srv.URL+"/items?offset=0", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	checkExact(t, rowsOf(t, out), rows)
	c.mu.Lock()
	served, refused := c.served, c.refused
	c.mu.Unlock()
	held, holds := heldFor(t, errText)
	t.Logf("%d served, %d refused; %d holds, %v in all", served, refused, holds, held.Round(time.Millisecond))
	if refused != 0 || served != rows {
		t.Errorf("the server served %d and refused %d; want %d served and none refused", served, refused, rows)
	}
	if holds == 0 {
		t.Errorf("no request held behind a limit of %d a window for %d rows", c.limit, rows)
	}
}

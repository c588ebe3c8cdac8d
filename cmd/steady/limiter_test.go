package main

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// limiterCases are the header forms of express-rate-limit, each with and
// without Retry-After on its refusals, and two stacked limiters: a short
// burst limit under a longer one.
func limiterCases() []struct {
	name     string
	limiters []limiter
} {
	const limit, windowMs = 20, 2000
	var cases []struct {
		name     string
		limiters []limiter
	}
	for _, h := range []string{"draft-6", "draft-7", "draft-8", "legacy"} {
		for _, ra := range []bool{true, false} {
			l := limiter{Limit: limit, WindowMs: windowMs, Headers: h, RetryAfter: ptr(ra)}
			cases = append(cases, struct {
				name     string
				limiters []limiter
			}{l.String(), []limiter{l}})
		}
	}
	stacks := [][]limiter{
		{{Limit: 10, WindowMs: 1000, Headers: "draft-8", Name: "burst"}, {Limit: 25, WindowMs: 3000, Headers: "draft-8", Name: "sustained"}},
		{{Limit: 10, WindowMs: 1000, Headers: "legacy"}, {Limit: 25, WindowMs: 3000, Headers: "draft-7"}},
	}
	for _, s := range stacks {
		cases = append(cases, struct {
			name     string
			limiters []limiter
		}{"stacked " + s[0].String() + " and " + s[1].String(), s})
	}
	return cases
}

// A lone paced harvest behind a real express-rate-limit, in every header
// form: every row exactly once, no request refused, and within 10% of the
// least time the quota allows. The forms run one after another, so that
// their timing is not each other's load.
func TestHarvestAtTheQuotasEdge(t *testing.T) {
	t.Parallel()
	const rows = 61
	for _, c := range limiterCases() {
		t.Run(c.name, func(t *testing.T) {
			srv := startLimiter(t, limiterConfig{Rows: rows, Page: 1, Limiters: c.limiters})
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			start := time.Now()
			code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?offset=0&limit=1", "-o", out)
			elapsed := time.Since(start)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errText)
			}
			checkExact(t, rowsOf(t, out), rows)
			served, refused := srv.stats(t)
			if refused != 0 || served != rows {
				t.Errorf("the server served %d and refused %d; want %d served and none refused", served, refused, rows)
			}
			floor := quotaFloor(rows, c.limiters)
			t.Logf("%d rows in %v; the quota's floor is %v (%.3fx)", rows, elapsed.Round(time.Millisecond), floor, elapsed.Seconds()/floor.Seconds())
			if elapsed > floor*110/100 {
				t.Errorf("took %v, more than 1.10x the floor of %v", elapsed.Round(time.Millisecond), floor)
			}
		})
	}
}

// Two harvests in one process sharing one quota: each gets every row
// exactly once, and the server refuses at most one request a window.
func TestTwoHarvestsShareAQuota(t *testing.T) {
	t.Parallel()
	const rows = 41
	l := limiter{Limit: 20, WindowMs: 2000, Headers: "draft-8"}
	srv := startLimiter(t, limiterConfig{Rows: rows, Page: 1, Limiters: []limiter{l}})
	dir := t.TempDir()
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 2 {
		wg.Go(func() {
			out := filepath.Join(dir, fmt.Sprintf("rows-%d.jsonl", i))
			if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?offset=0&limit=1", "-o", out); code != exitOK {
				t.Errorf("harvest %d: exit %d: %s", i, code, errText)
				return
			}
			checkExact(t, rowsOf(t, out), rows)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	served, refused := srv.stats(t)
	windows := int(elapsed/l.window()) + 1
	t.Logf("2 harvests of %d rows in %v: %d served, %d refused over %d windows", rows, elapsed.Round(time.Millisecond), served, refused, windows)
	if served != 2*rows {
		t.Errorf("served %d, want %d", served, 2*rows)
	}
	if refused > windows {
		t.Errorf("%d refused over %d windows; want at most one a window", refused, windows)
	}
}

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/limitertest"
)

// limiterCases are the header forms of express-rate-limit, each with and
// without Retry-After on its refusals, and two stacked limiters: a short
// burst limit under a longer one.
func limiterCases() []struct {
	name     string
	limiters []limitertest.Limiter
} {
	const limit, windowMs = 20, 2000
	var cases []struct {
		name     string
		limiters []limitertest.Limiter
	}
	for _, h := range []string{"draft-6", "draft-7", "draft-8", "legacy"} {
		for _, ra := range []bool{true, false} {
			l := limitertest.Limiter{Limit: limit, WindowMs: windowMs, Headers: h, RetryAfter: &ra}
			cases = append(cases, struct {
				name     string
				limiters []limitertest.Limiter
			}{l.String(), []limitertest.Limiter{l}})
		}
	}
	stacks := [][]limitertest.Limiter{
		{{Limit: 10, WindowMs: 1000, Headers: "draft-8", Name: "burst"}, {Limit: 25, WindowMs: 3000, Headers: "draft-8", Name: "sustained"}},
		{{Limit: 10, WindowMs: 1000, Headers: "legacy"}, {Limit: 25, WindowMs: 3000, Headers: "draft-7"}},
	}
	for _, s := range stacks {
		cases = append(cases, struct {
			name     string
			limiters []limitertest.Limiter
		}{"stacked " + s[0].String() + " and " + s[1].String(), s})
	}
	return cases
}

// A lone paced harvest behind a real express-rate-limit, in every header
// form: every row exactly once, no request refused, and its holds within
// 10% of the least time the quota allows. The forms run one after another.
//
// What is asserted is the time the harvest chose to hold its requests
// (its -v lines), not its wall time: the holds are what pacing decides,
// and a pacer that holds too long (a slot per request, a second of jitter
// a window) shows in them, while on a loaded machine the wall time also
// counts every round trip through node. The wall time against the floor
// is logged here and measured in bench's TestQuotaEdge.
func TestHarvestAtTheQuotasEdge(t *testing.T) {
	t.Parallel()
	const rows = 61
	for _, c := range limiterCases() {
		t.Run(c.name, func(t *testing.T) {
			srv := limitertest.Start(t, limitertest.Config{Rows: rows, Page: 1, Limiters: c.limiters})
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			start := time.Now()
			code, _, errText := cli(t, "harvest", "-v", srv.URL+"/items?offset=0&limit=1", "-o", out)
			elapsed := time.Since(start)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errText)
			}
			checkExact(t, rowsOf(t, out), rows)
			served, refused := srv.Stats(t)
			if refused != 0 || served != rows {
				t.Errorf("the server served %d and refused %d; want %d served and none refused", served, refused, rows)
			}
			floor := limitertest.Floor(rows, c.limiters)
			held, holds := heldFor(t, errText)
			t.Logf("%d rows in %v; the quota's floor is %v (%.3fx); %d holds, %v in all (%.3fx)", rows, elapsed.Round(time.Millisecond),
				floor, elapsed.Seconds()/floor.Seconds(), holds, held.Round(time.Millisecond), held.Seconds()/floor.Seconds())
			allowed := floor*110/100 + wholeSecondSlack(rows, c.limiters)
			if holds == 0 || held > allowed {
				t.Errorf("held %d requests for %v in all; want some, for at most %v (1.10x the floor of %v, plus a second a window for a reset named in whole seconds)", holds, held, allowed, floor)
			}
		})
	}
}

// wholeSecondSlack is what a reset named in whole Unix seconds (the legacy
// X-RateLimit-Reset) may cost a harvest of rows that waits out its
// windows: the pacer wakes at the second the header names, never before it
// (ADR 0321), so each window may end up to a second later than the
// limiter's own instant.
func wholeSecondSlack(rows int, limiters []limitertest.Limiter) time.Duration {
	var slack time.Duration
	for _, l := range limiters {
		if l.Headers == "legacy" {
			slack = max(slack, time.Duration((rows-1)/l.Limit)*time.Second)
		}
	}
	return slack
}

// Two harvests in one process sharing one quota: each gets every row
// exactly once, and the server refuses at most one request a window.
func TestTwoHarvestsShareAQuota(t *testing.T) {
	t.Parallel()
	const rows = 41
	l := limitertest.Limiter{Limit: 20, WindowMs: 2000, Headers: "draft-8"}
	srv := limitertest.Start(t, limitertest.Config{Rows: rows, Page: 1, Limiters: []limitertest.Limiter{l}})
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
	served, refused := srv.Stats(t)
	windows := int(elapsed/l.Window()) + 1
	t.Logf("2 harvests of %d rows in %v: %d served, %d refused over %d windows", rows, elapsed.Round(time.Millisecond), served, refused, windows)
	if served != 2*rows {
		t.Errorf("served %d, want %d", served, 2*rows)
	}
	if refused > windows {
		t.Errorf("%d refused over %d windows; want at most one a window", refused, windows)
	}
}

// heldFor sums the holds a -v harvest reported: "hold GET URL: 988ms
// (rate limited)" lines. A retry would say "retry", and the harvests here
// must not need one.
func heldFor(t *testing.T, stderr string) (held time.Duration, holds int) {
	t.Helper()
	for line := range strings.Lines(stderr) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "retry") {
			t.Errorf("a retry in a paced harvest: %s", line)
		}
		if !strings.HasPrefix(line, "hold ") {
			continue
		}
		_, rest, _ := strings.Cut(line, ": ")
		d, _, _ := strings.Cut(rest, " ")
		v, err := time.ParseDuration(d)
		if err != nil {
			t.Fatalf("a hold line without its duration: %q", line)
		}
		held += v
		holds++
	}
	return held, holds
}

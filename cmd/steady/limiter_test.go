package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
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
			floor, held, holds := harvestPaced(t, rows, c.limiters)
			allowed := floor*110/100 + wholeSecondSlack(rows, c.limiters)
			if holds == 0 || held > allowed {
				t.Errorf("held %d requests for %v in all; want some, for at most %v (1.10x the floor of %v, plus a second a window for a reset named in whole seconds)", holds, held, allowed, floor)
			}
		})
	}
}

// harvestPaced harvests rows, one a page, from a limitertest server behind
// limiters, checks that every row came once and the server refused none,
// and returns the quota's floor and the pacer's holds (its -v lines).
func harvestPaced(t *testing.T, rows int, limiters []limitertest.Limiter) (floor, held time.Duration, holds int) {
	t.Helper()
	srv := limitertest.Start(t, limitertest.Config{Rows: rows, Page: 1, Limiters: limiters})
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
	floor = limitertest.Floor(rows, limiters)
	held, holds = heldFor(t, errText)
	t.Logf("%d rows in %v; the quota's floor is %v (%.3fx); %d holds, %v in all (%.3fx)", rows, elapsed.Round(time.Millisecond),
		floor, elapsed.Seconds()/floor.Seconds(), holds, held.Round(time.Millisecond), held.Seconds()/floor.Seconds())
	return floor, held, holds
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

var headerlessRounds = flag.Int("headerless.rounds", 0,
	"rounds of TestHarvestHeaderlessDefaults (0 skips it): harvests behind a bare-429 express-rate-limit of 50 per 5 s, with the command's defaults")

// headerlessHarvest runs one harvest with the command's defaults (and -v,
// to read its breaker lines) behind a fresh server of rows rows behind
// lim, following links, or fetching computed offset pages --concurrent
// (32) at once when computed is set. It returns the wall time, the
// server's counts and the breaker's limit lines, or the failure of a
// harvest that did not end with every row.
func headerlessHarvest(t *testing.T, rows int, lim []limitertest.Limiter, computed bool) (elapsed time.Duration, served, refused int, learned []string, failed string) {
	t.Helper()
	srv := limitertest.Start(t, limitertest.Config{Rows: rows, Page: 1, Limiters: lim})
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	// A harvest that has not ended in ten times the floor is stopped there.
	limit := 10 * harvestFloor(rows, lim, computed)
	args := []string{"harvest", "-v", srv.URL + "/items?offset=0&limit=1", "-o", out,
		"--max-time", strconv.Itoa(int(limit.Seconds()) + 1)}
	if computed {
		args = append(args, "--pages", "offset:offset:limit")
	}
	start := time.Now()
	code, _, errText := cli(t, args...)
	elapsed = time.Since(start)
	served, refused = srv.Stats(t)
	srv.Stop()
	if code != exitOK {
		return elapsed, served, refused, nil, fmt.Sprintf("exit %d: %s", code, lastLines(errText, 2))
	}
	checkExact(t, rowsOf(t, out), rows)
	for line := range strings.Lines(errText) {
		if strings.HasPrefix(line, "breaker limit:") && strings.Contains(line, " learned") {
			learned = append(learned, strings.TrimSpace(line))
		}
	}
	return elapsed, served, refused, learned, ""
}

// harvestFloor is the least time a harvest of rows one-row pages takes
// under lim: one request a page, and for computed pages one more, the
// empty page that ends the walk.
func harvestFloor(rows int, lim []limitertest.Limiter, computed bool) time.Duration {
	if computed {
		rows++
	}
	return limitertest.Floor(rows, lim)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// A harvest that follows links and one that fetches computed pages 32 at
// once, behind a real express-rate-limit that answers a bare 429, 10 per
// second, with the command's defaults: every row exactly once, and the
// breaker's line says it learned the limiter's quota (10 a window, or 11
// while it probes for one more). The wall time against the floor is
// logged, and measured at 50 per 5 s by TestHarvestHeaderlessDefaults.
func TestHarvestBehindHeaderlessLimiter(t *testing.T) {
	t.Parallel()
	lim := []limitertest.Limiter{{Limit: 10, WindowMs: 1000, Headers: "none"}}
	for _, computed := range []bool{false, true} {
		name := map[bool]string{false: "links", true: "computed pages"}[computed]
		t.Run(name, func(t *testing.T) {
			const rows = 41
			elapsed, served, refused, learned, failed := headerlessHarvest(t, rows, lim, computed)
			if failed != "" {
				t.Fatal(failed)
			}
			floor := harvestFloor(rows, lim, computed)
			t.Logf("%s: %d rows in %v (%.3fx the floor %v), %d served, %d 429s; %q", name, rows, elapsed.Round(time.Millisecond),
				elapsed.Seconds()/floor.Seconds(), floor, served, refused, learned)
			if len(learned) == 0 {
				t.Fatal("no breaker line told a learned quota")
			}
			last := learned[len(learned)-1]
			if !strings.Contains(last, " 10 per ") && !strings.Contains(last, " 11 per ") {
				t.Errorf("last breaker line %q, want 10 (or 11) per window", last)
			}
		})
	}
}

// TestHarvestHeaderlessDefaults measures both harvests behind a bare-429
// express-rate-limit of 50 per 5 s, with the command's defaults, against
// the floor the quota allows, with the 429s drawn. About a minute a
// round; bench/headerless.sh runs it beside the build it is compared with.
//
//	go test -run TestHarvestHeaderlessDefaults -headerless.rounds 1 -v .
func TestHarvestHeaderlessDefaults(t *testing.T) {
	if *headerlessRounds == 0 {
		t.Skip("run with -headerless.rounds N")
	}
	lim := []limitertest.Limiter{{Limit: 50, WindowMs: 5000, Headers: "none"}}
	const rows = 150
	for round := range *headerlessRounds {
		for _, computed := range []bool{false, true} {
			floor := harvestFloor(rows, lim, computed)
			elapsed, served, refused, _, failed := headerlessHarvest(t, rows, lim, computed)
			t.Logf("round %d harvest computed=%v: %d rows in %v (%.3fx the floor %v), %d served, %d 429s %s", round, computed, rows,
				elapsed.Round(time.Millisecond), elapsed.Seconds()/floor.Seconds(), floor, served, refused, failed)
		}
	}
}

package main

import (
	"bufio"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/internal/limitertest"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// twoWindows are two stacked express-rate-limit windows, a burst under a
// longer one, both announced in draft-8's RateLimit and RateLimit-Policy.
func twoWindows(burst, burstMs, sustained, sustainedMs int) []limitertest.Limiter {
	return []limitertest.Limiter{
		{Limit: burst, WindowMs: burstMs, Headers: "draft-8", Name: "burst"},
		{Limit: sustained, WindowMs: sustainedMs, Headers: "draft-8", Name: "sustained"},
	}
}

// etaOff is how far an ETA given at some instant was from the time the
// walk really took from there, as a share of that time, with slack for
// the whole seconds the reset fields are rounded to.
func etaOff(eta, real, slack time.Duration) float64 {
	off := (eta - real).Abs() - slack
	if off <= 0 {
		return 0
	}
	return off.Seconds() / real.Seconds()
}

// A walk through the client the command builds, behind a real
// express-rate-limit with two windows (10 a second under 30 every 3 s):
// no request refused, and from the first tenth of the walk on each page's
// ETA is within a tenth of the time the walk really took from there (or
// within the second the draft's reset field is rounded to).
func TestETAAgainstTwoExpressWindows(t *testing.T) {
	t.Parallel()
	const rows = 75
	ls := twoWindows(10, 1000, 30, 3000)
	srv := limitertest.Start(t, limitertest.Config{Rows: rows, Page: 1, Limiters: ls, Total: true})
	pacer := &ratelimit.Pacer{}
	c, err := steady.New(steady.Options{Policy: retry.Policy{Pacer: pacer}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	w, err := c.Walk(srv.URL+"/items?offset=0&limit=1", nil, paginate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type mark struct {
		at  time.Time
		eta time.Duration
	}
	var marks []mark
	for _, err := range w.All(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		marks = append(marks, mark{time.Now(), w.Summary().ETA})
	}
	end := time.Now()
	served, refused := srv.Stats(t)
	if len(marks) != rows || served != rows || refused != 0 {
		t.Fatalf("%d pages, %d served, %d refused; want %d, %d and none", len(marks), served, refused, rows, rows)
	}
	worst := 0.0
	for i, m := range marks[rows/10 : rows-1] {
		real := end.Sub(m.at)
		if off := etaOff(m.eta, real, time.Second); off > 0.10 {
			t.Errorf("page %d: ETA %v, the walk took %v more", rows/10+i+1, m.eta, real.Round(time.Millisecond))
		}
		worst = max(worst, etaOff(m.eta, real, 0))
	}
	t.Logf("%d pages in %v (floor %v); worst ETA error %.1f%% without slack", rows, end.Sub(marks[0].at).Round(time.Millisecond),
		limitertest.Floor(rows, ls), 100*worst)
}

var progressRE = regexp.MustCompile(`^progress: .*?(\d+)/(\d+) rows.*, eta (\S+)$`)

// The measured run: a harvest of STEADY_ETA_PAGES pages (2,000 for the
// figures in docs/benchmarks.md) by the built binary behind express-rate-limit
// with 20 requests every 10 s under 100 every 60 s, its plain progress
// lines read as they arrive. It logs the requests refused, the wall time
// against the quota's floor, and how far each ETA shown from the first
// tenth on was from the time that really remained. It takes about 20
// minutes for 2,000 pages, so it runs only when asked:
//
//	STEADY_ETA_PAGES=2000 go test -run TestETAMeasuredHarvest -timeout 40m -v .
func TestETAMeasuredHarvest(t *testing.T) {
	pages, _ := strconv.Atoi(os.Getenv("STEADY_ETA_PAGES"))
	if pages <= 0 {
		t.Skip("set STEADY_ETA_PAGES (2000 for the published figures) to run it")
	}
	ls := twoWindows(20, 10_000, 100, 60_000)
	srv := limitertest.Start(t, limitertest.Config{Rows: pages, Page: 1, Limiters: ls, Total: true})
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	cmd := exec.Command(binary(t), "harvest", srv.URL+"/items?offset=0&limit=1", "-o", out, "--max-retry-after", "120")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type mark struct {
		at   time.Time
		rows int
		eta  time.Duration
	}
	var marks []mark
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		m := progressRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		eta, err := time.ParseDuration(m[3])
		if err != nil {
			t.Fatalf("progress line %q: %v", sc.Text(), err)
		}
		marks = append(marks, mark{time.Now(), n, eta})
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("harvest: %v", err)
	}
	end := time.Now()
	checkExact(t, rowsOf(t, out), pages)
	served, refused := srv.Stats(t)
	floor := limitertest.Floor(pages, ls)
	var offs, slacked []float64
	for _, m := range marks {
		if m.rows < pages/10 || m.rows >= pages {
			continue
		}
		real := end.Sub(m.at)
		offs = append(offs, etaOff(m.eta, real, 0))
		slacked = append(slacked, etaOff(m.eta, real, time.Second))
		t.Logf("at row %d: eta %v, %v left (%.2f%%)", m.rows, m.eta, real.Round(time.Millisecond), 100*offs[len(offs)-1])
	}
	if len(offs) == 0 {
		t.Fatal("no progress line with an ETA past the first tenth")
	}
	slices.Sort(offs)
	slices.Sort(slacked)
	within := 0
	for _, o := range offs {
		if o <= 0.10 {
			within++
		}
	}
	t.Logf("%d pages in %v, floor %v (%.3fx); %d served, %d refused", pages, end.Sub(start).Round(time.Millisecond), floor,
		end.Sub(start).Seconds()/floor.Seconds(), served, refused)
	t.Logf("ETA from the first tenth on, %d progress lines: median error %.2f%%, worst %.2f%%, %d of %d within 10%%",
		len(offs), 100*offs[len(offs)/2], 100*offs[len(offs)-1], within, len(offs))
	if refused != 0 {
		t.Errorf("%d requests refused", refused)
	}
	t.Logf("with a second's slack for the whole-second reset fields: worst %.2f%%", 100*slacked[len(slacked)-1])
	if math.IsNaN(offs[0]) || slacked[len(slacked)-1] > 0.10 {
		t.Errorf("worst ETA error %.2f%% beyond a second's slack, want within 10%%", 100*slacked[len(slacked)-1])
	}
}

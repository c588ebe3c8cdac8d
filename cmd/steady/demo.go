package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/steadytest"
)

// The demo's client is tuned for a server on loopback whose faults last about
// a second: attempts that hang or stall are given up after 750ms, and waits
// stay short, so a 100,000-row harvest through the harsh mix takes seconds.
const (
	demoAttemptTimeout = 750 * time.Millisecond
	demoPageSize       = 1000
)

func newDemo(g *globals) *cobra.Command {
	var (
		rows          int
		faults, style string
		seed          uint64
		out           string
		force         bool
		fleet         int
		sharedQuota   string
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Harvest a large collection from a deliberately flaky API on loopback",
		Long: `demo starts steady's own flaky API on 127.0.0.1 and harvests every row
through it: rate limits with Retry-After (in seconds and as dates), 502s,
503s and 504s, reset connections before and during bodies, truncated
bodies, stalls and hangs, slow drips and a request quota. It then checks
that exactly the ids 1..N arrived, once each, and prints what it took:
pages, attempts, retries by cause, time spent waiting by reason.

Its client is tuned for a server on loopback (12 attempts a request, a 30s
stall budget, 750ms read timeout); --retries, --stall-timeout,
--read-timeout, --connect-timeout, --max-retry-after and their variables
override that tuning, so you can watch a policy fail where the faults are
too much for it. A page walk sends one request at a time, so --concurrent
has nothing to bound here.`,
		Example: `  steady demo
  steady demo --rows 20000 --faults mild --seed 7
  steady demo --style cursor -o rows.jsonl`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rows < 1 {
				return usagef("--rows %d: want 1 or more", rows)
			}
			mix, err := steadytest.Preset(faults, seed)
			if err != nil {
				return &usageError{err: err}
			}
			st, err := steadytest.ParseStyle(style)
			if err != nil {
				return &usageError{err: err}
			}
			pages, items := "link", ""
			switch st {
			case steadytest.JSONLinks:
				pages, items = "json-links", "features"
			case steadytest.Cursor:
				pages, items = "cursor:next_cursor:cursor", "data"
			}
			next, err := parsePages(pages)
			if err != nil {
				return err
			}
			if fleet < 1 || fleet > maxDemoFleet {
				return usagef("--fleet %d: want 1 to %d harvesters", fleet, maxDemoFleet)
			}
			if fleet > 1 && out != "" {
				return usagef("--fleet %d writes each harvester's rows to a temporary file; -o is for one harvester", fleet)
			}
			shared, err := openShared(cmd, sharedQuota, g.stderr)
			if err != nil {
				return err
			}
			defer shared.Close()
			// The tuning below is the demo's default; a setting the user gave
			// (a flag, or its variable) wins, as in every other command.
			settings, err := g.settings()
			if err != nil {
				return err
			}
			settings.APIKey = "" // the demo's server takes no key

			srv := steadytest.NewServer(steadytest.ServerOptions{Rows: rows, Style: st, Faults: mix,
				DefaultLimit: demoPageSize, MaxLimit: demoPageSize, LogLimit: -1})
			defer srv.Close()
			target, _ := url.Parse(srv.URL + steadytest.ItemsPath)
			// The demo's API fails about a quarter of all attempts on purpose;
			// a budget sized for a real service (a tenth) would end the
			// demo, so the fleet's shared budget is sized to its faults.
			policy := shared.share(retry.Policy{Budget: &budget.Budget{Ratio: 0.5, MinPerSecond: 10, MaxTokens: 50}, MaxAttempts: 12, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 2 * time.Second,
				MaxRetryAfter: 10 * time.Second, StallTimeout: 30 * time.Second, ReadTimeout: demoAttemptTimeout,
				RetryStatus: retry.AnyServerError, Pacer: &ratelimit.Pacer{MaxHold: 10 * time.Second}})
			h := demoHarvest{origin: target, pages: pages, next: next, items: items, force: force, settings: settings, tel: g.tel.reporter(nil)}

			if fleet == 1 {
				if shared == nil {
					policy.Budget = nil
				}
				fmt.Fprintf(cmd.OutOrStdout(), "steady demo: harvesting %s from a flaky API at %s (faults: %s, seed %d, %s pages)\n",
					plural(rows, "row", "rows"), srv.URL, faults, seed, st)
				h.onClient = func(c *steady.Client) {
					fmt.Fprintf(cmd.OutOrStdout(), "  client:   %s\n", demoClientLine(c.Options()))
				}
				r := g.renderer(nil, config.Settings{})
				d, err := h.run(cmd, policy, r, out, rows)
				r.Close()
				if err != nil {
					return err
				}
				writeDemoSummary(cmd.OutOrStdout(), d.res, d.check, d.out, d.counts, d.causes)
				if !d.check.exact() {
					return fmt.Errorf("the harvest is not exact: %s", d.check)
				}
				return nil
			}

			how := "each on its own quota and retry budget"
			if shared != nil {
				how = "through one shared quota and retry budget"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "steady demo: %d harvesters, %s, each harvesting %d rows from a flaky API at %s (faults: %s, seed %d, %s pages)\n",
				fleet, how, rows, srv.URL, faults, seed, st)
			start := time.Now()
			runs := make([]demoRun, fleet)
			errs := make([]error, fleet)
			var wg sync.WaitGroup
			for i := range fleet {
				// Each harvester is its own client, as a process of a fleet
				// would be: its own transport, pacer and local budget, and
				// with a shared store its own view of it.
				p := policy
				if shared == nil {
					p.Budget = nil // as the lone demo: no budget
					p.Pacer = &ratelimit.Pacer{MaxHold: p.MaxRetryAfter}
				} else {
					b := policy.Budget
					p.Budget = &budget.Budget{Ratio: b.Ratio, MinPerSecond: b.MinPerSecond, MaxTokens: b.MaxTokens, Store: b.Store}
					p.Pacer = &ratelimit.SharedPacer{Leaser: shared.quota}
				}
				wg.Go(func() { runs[i], errs[i] = h.run(cmd, p, nil, "", rows) })
			}
			wg.Wait()
			wall := time.Since(start)
			for _, d := range runs {
				if d.out != "" {
					defer func() { _ = os.Remove(d.out) }()
				}
			}
			if err := errors.Join(errs...); err != nil {
				return err
			}
			writeFleetSummary(cmd.OutOrStdout(), runs, wall)
			for i, d := range runs {
				if !d.check.exact() {
					return fmt.Errorf("harvester %d's harvest is not exact: %s", i+1, d.check)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&rows, "rows", 100_000, "rows in the collection")
	f.StringVar(&faults, "faults", "harsh", "fault mix: none, mild or harsh")
	f.Uint64Var(&seed, "seed", 1, "seed of the fault draw: the same seed gives the same faults")
	f.StringVar(&style, "style", "link", "pagination style: link, json-links or cursor")
	f.StringVarP(&out, "output", "o", "", "write the rows here (default: a new temporary file)")
	f.BoolVar(&force, "force", false, "replace an existing output")
	f.IntVar(&fleet, "fleet", 1, "harvesters run at once, each its own client, as processes of a fleet would be")
	addSharedQuotaFlag(cmd, &sharedQuota)
	completeValues(cmd, "faults", faultChoices...)
	completeValues(cmd, "style", styleChoices...)
	return cmd
}

// maxDemoFleet bounds --fleet: each harvester holds a connection pool and
// a collection's worth of output.
const maxDemoFleet = 64

// demoHarvest is one harvest of the demo's collection.
type demoHarvest struct {
	origin       *url.URL
	pages, items string
	next         paginate.Next
	force        bool
	settings     config.Settings      // what the user set, over the demo's tuning
	onClient     func(*steady.Client) // when set, told of the client before it harvests
	tel          event.Reporter       // the run's telemetry, nil without one
}

// demoRun is what one harvester did.
type demoRun struct {
	res    result
	check  idCheck
	out    string
	counts render.Counts
	causes map[string]int
}

// run harvests the collection once with its own client; r, when set, also
// receives the events. An empty out means a new temporary file.
func (h demoHarvest) run(cmd *cobra.Command, policy retry.Policy, r event.Reporter, out string, rows int) (demoRun, error) {
	var d demoRun
	temporary := out == ""
	if temporary {
		f, err := os.CreateTemp("", "steady-demo-*.jsonl")
		if err != nil {
			return d, err
		}
		out = f.Name()
		_ = f.Close()
		_ = os.Remove(out)
	}
	d.out = out
	tally := &render.Tally{}
	causes := &causeCount{}
	rep := event.Multi(tally, causes, h.tel)
	if r != nil {
		rep = event.Multi(r, tally, causes, h.tel)
	}
	policy.Reporter = rep
	opt := steady.ApplySettings(steady.Options{Policy: policy, Reporter: rep,
		ConnectTimeout: 2 * time.Second, ResponseHeaderTimeout: demoAttemptTimeout}, h.settings, config.DefaultPrefix)
	client, err := steady.New(opt)
	if err != nil {
		return d, &usageError{err: err}
	}
	defer client.CloseIdleConnections()
	if h.onClient != nil {
		h.onClient(client)
	}
	j := &job{client: client, origin: h.origin, pages: h.pages, next: h.next, items: h.items,
		format: "jsonl", out: out, force: h.force}
	if d.res, err = j.run(cmd.Context(), rep); err != nil {
		return d, demoFailed(err, out, temporary)
	}
	if d.check, err = checkIDs(out, rows); err != nil {
		return d, err
	}
	d.counts, d.causes = tally.Counts(), causes.snapshot()
	return d, nil
}

// demoFailed explains a demo harvest that did not finish. Its server ends
// with the demo, so there is nothing to --resume: the hint is dropped (and
// with it exit 3), and the files of a temporary output are removed.
func demoFailed(err error, out string, temporary bool) error {
	if temporary {
		_ = os.Remove(partialPath(out))
		_ = os.Remove(statePath(out))
	}
	var ie *interruptedError
	if errors.As(err, &ie) {
		return fmt.Errorf("%w; the demo's server ends with the demo, so run it again to start over", ie.err)
	}
	return err
}

// demoClientLine states the settings the demo's client runs with:
//
//	up to 12 attempts a request, stall budget 30s, read timeout 750ms, connect timeout 2s, Retry-After slept up to 10s
func demoClientLine(o steady.Options) string {
	budget := "off"
	if o.Policy.StallTimeout > 0 {
		budget = o.Policy.StallTimeout.String()
	}
	read := "off"
	if o.Policy.ReadTimeout > 0 {
		read = o.Policy.ReadTimeout.String()
	}
	return fmt.Sprintf("up to %s a request, stall budget %s, read timeout %s, connect timeout %s, Retry-After slept up to %s",
		plural(o.Policy.MaxAttempts, "attempt", "attempts"), budget, read, o.ConnectTimeout, o.Policy.MaxRetryAfter)
}

// writeFleetSummary prints each harvester's line and the fleet's totals.
func writeFleetSummary(w io.Writer, runs []demoRun, wall time.Duration) {
	var pages, attempts, retries int
	causes := map[string]int{}
	waited := map[string]time.Duration{}
	exact := 0
	for i, d := range runs {
		fmt.Fprintf(w, "  harvester %d: %s, %s; %s, %s, %s, in %s\n", i+1, plural(d.check.rows, "row", "rows"), d.check,
			plural(d.res.pages, "page", "pages"), plural(d.counts.Attempts(), "attempt", "attempts"), plural(d.counts.Retries, "retry", "retries"), d.res.elapsed.Round(time.Millisecond))
		pages += d.res.pages
		attempts += d.counts.Attempts()
		retries += d.counts.Retries
		for k, v := range d.causes {
			causes[k] += v
		}
		for k, v := range d.counts.WaitedByReason {
			waited[k] += v
		}
		if d.check.exact() {
			exact++
		}
	}
	fmt.Fprintf(w, "  fleet:    %d of %d harvests exact\n", exact, len(runs))
	fmt.Fprintf(w, "  pages:    %d\n", pages)
	fmt.Fprintf(w, "  attempts: %d (%s)\n", attempts, plural(retries, "retry", "retries"))
	fmt.Fprintf(w, "  retries by cause: %s\n", joinCounts(causes, func(v int) string { return fmt.Sprint(v) }))
	fmt.Fprintf(w, "  waited:   %s\n", joinCounts(waited, func(d time.Duration) string { return d.Round(time.Millisecond).String() }))
	fmt.Fprintf(w, "  elapsed:  %s\n", wall.Round(time.Millisecond))
}

// causeCount counts re-sends by what caused them: a status, or a failure
// class such as reset or timeout.
type causeCount struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *causeCount) Report(e event.Event) {
	if e.Kind != event.RetryScheduled {
		return
	}
	cause := e.ErrClass
	if e.Status != 0 {
		cause = fmt.Sprint(e.Status)
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	c.m[cause]++
	c.mu.Unlock()
}

func (c *causeCount) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.m)
}

// idCheck is what arrived, against ids 1..n.
type idCheck struct {
	n, rows, dups, missing, outside int
}

func (c idCheck) exact() bool {
	return c.rows == c.n && c.dups == 0 && c.missing == 0 && c.outside == 0
}

func (c idCheck) String() string {
	if c.exact() {
		return fmt.Sprintf("ids 1..%d exactly once (no gap, no duplicate)", c.n)
	}
	return fmt.Sprintf("%s for ids 1..%d: %d missing, %d duplicated, %d outside the range", plural(c.rows, "row", "rows"), c.n, c.missing, c.dups, c.outside)
}

// checkIDs reads the output back and checks that each id 1..n is there once.
func checkIDs(path string, n int) (idCheck, error) {
	c := idCheck{n: n}
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer func() { _ = f.Close() }()
	seen := make([]bool, n+1)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var row struct{ ID int }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return c, fmt.Errorf("reading back %s: row %d: %w", path, c.rows+1, err)
		}
		c.rows++
		switch {
		case row.ID < 1 || row.ID > n:
			c.outside++
		case seen[row.ID]:
			c.dups++
		default:
			seen[row.ID] = true
		}
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	for id := 1; id <= n; id++ {
		if !seen[id] {
			c.missing++
		}
	}
	return c, nil
}

func writeDemoSummary(w io.Writer, res result, check idCheck, out string, counts render.Counts, causes map[string]int) {
	fmt.Fprintf(w, "  rows:     %d, %s\n", check.rows, check)
	fmt.Fprintf(w, "  output:   %s\n", out)
	fmt.Fprintf(w, "  pages:    %d\n", res.pages)
	fmt.Fprintf(w, "  attempts: %d (%s)\n", counts.Attempts(), plural(counts.Retries, "retry", "retries"))
	fmt.Fprintf(w, "  retries by cause: %s\n", joinCounts(causes, func(v int) string { return fmt.Sprint(v) }))
	fmt.Fprintf(w, "  waited:   %s\n", joinCounts(counts.WaitedByReason, func(d time.Duration) string { return d.Round(time.Millisecond).String() }))
	fmt.Fprintf(w, "  elapsed:  %s\n", res.elapsed.Round(time.Millisecond))
}

func joinCounts[V any](m map[string]V, format func(V) string) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+" "+format(m[k]))
	}
	return strings.Join(parts, ", ")
}

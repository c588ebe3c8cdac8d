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
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/progress"
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
			temporary := out == ""
			if temporary {
				f, err := os.CreateTemp("", "steady-demo-*.jsonl")
				if err != nil {
					return err
				}
				out = f.Name()
				f.Close()
				os.Remove(out)
			}

			srv := steadytest.NewServer(steadytest.ServerOptions{Rows: rows, Style: st, Faults: mix,
				DefaultLimit: demoPageSize, MaxLimit: demoPageSize, LogLimit: -1})
			defer srv.Close()
			target, _ := url.Parse(srv.URL + steadytest.ItemsPath)

			tally := &progress.Tally{}
			causes := &causeCount{}
			r := g.renderer(nil, config.Settings{})
			rep := progress.Multi(r, tally, causes)
			policy := retry.Policy{MaxAttempts: 12, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 2 * time.Second,
				MaxRetryAfter: 10 * time.Second, StallTimeout: 30 * time.Second, ReadTimeout: demoAttemptTimeout,
				RetryStatus: retry.AnyServerError, Pace: true, Reporter: rep}
			opt := steady.Options{Policy: policy, Reporter: rep,
				ConnectTimeout: 2 * time.Second, ResponseHeaderTimeout: demoAttemptTimeout}
			// The tuning above is the demo's default; a setting the user gave
			// (a flag, or its variable) wins, as in every other command.
			s, err := g.settings()
			if err != nil {
				r.Close()
				return err
			}
			s.APIKey = "" // the demo's server takes no key
			opt = steady.ApplySettings(opt, s, config.DefaultPrefix)
			client, err := steady.New(opt)
			if err != nil {
				r.Close()
				return &usageError{err: err}
			}
			defer client.CloseIdleConnections()

			fmt.Fprintf(cmd.OutOrStdout(), "steady demo: harvesting %s from a flaky API at %s (faults: %s, seed %d, %s pages)\n",
				plural(rows, "row", "rows"), srv.URL, faults, seed, st)
			fmt.Fprintf(cmd.OutOrStdout(), "  client:   %s\n", demoClientLine(client.Options()))
			j := &job{client: client, origin: target, pages: pages, next: next, items: items,
				format: "jsonl", out: out, force: force}
			res, err := j.run(cmd.Context(), rep)
			r.Close()
			if err != nil {
				return demoFailed(err, out, temporary)
			}
			check, err := checkIDs(out, rows)
			if err != nil {
				return err
			}
			writeDemoSummary(cmd.OutOrStdout(), res, check, out, tally.Counts(), causes.snapshot())
			if !check.exact() {
				return fmt.Errorf("the harvest is not exact: %s", check)
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
	completeValues(cmd, "faults", faultChoices...)
	completeValues(cmd, "style", styleChoices...)
	return cmd
}

// demoFailed explains a demo harvest that did not finish. Its server ends
// with the demo, so there is nothing to --resume: the hint is dropped (and
// with it exit 3), and the files of a temporary output are removed.
func demoFailed(err error, out string, temporary bool) error {
	if temporary {
		os.Remove(partialPath(out))
		os.Remove(statePath(out))
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

// causeCount counts re-sends by what caused them: a status, or a failure
// class such as reset or timeout.
type causeCount struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *causeCount) Report(e progress.Event) {
	if e.Kind != progress.RetryScheduled {
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
	defer f.Close()
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

func writeDemoSummary(w io.Writer, res result, check idCheck, out string, counts progress.Counts, causes map[string]int) {
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

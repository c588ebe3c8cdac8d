package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady/cmd/steady/internal/simulate"
)

func newSimulate(g *globals) *cobra.Command {
	var (
		scenario string
		seed     uint64
		plot     string
		trials   int
		clients  int
		force    bool
	)
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Show what a retry policy does to a service, in a deterministic simulation",
		Long: `simulate runs a discrete-event simulation in virtual time that drives
steady's own backoff, Retry-After, budget and pacing code, so its numbers
say what the library itself would do. The same seed gives the same numbers.

Scenario contention: N clients each make one optimistic-concurrency write to
one shared row (network delay normal(10ms, 2ms), base backoff 5ms, cap 2s),
under no backoff, exponential backoff without jitter, full, equal and
decorrelated jitter; total calls and completion time for N = 10, 50, 100,
190, averaged over 100 trials.

Scenario outage: 1,000 clients sending steadily to a service that is down
(503) for 60s and then returns with finite capacity, under no retry, retry
without a budget, retry with a budget, and retry with a budget and pacing;
load amplification, time to recover, and the share of requests that
succeeded. --plot writes the load on the service over time as an SVG chart.`,
		Example: `  steady simulate
  steady simulate --scenario outage --plot outage.svg
  steady simulate --scenario contention --trials 20 --seed 7`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if scenario != "all" && scenario != "contention" && scenario != "outage" {
				return usagef("--scenario %q: want contention, outage or all", scenario)
			}
			if trials < 0 {
				return usagef("--trials %d: want a whole number of trials, 1 or more (0: %d)", trials, simulate.DefaultContentionTrials)
			}
			if clients < 0 {
				return usagef("--clients %d: want a whole number of clients, 1 or more (0: %d)", clients, simulate.DefaultOutageClients)
			}
			if plot != "" && scenario == "contention" {
				return usagef("--plot draws the outage scenario; use --scenario outage or all")
			}
			w := cmd.OutOrStdout()
			var svg *output
			if plot != "" {
				var err error
				if svg, err = createOutput(cmd.Context(), plot, force, w); err != nil {
					return err
				}
				defer svg.abort()
				if plot == "-" {
					// The chart is standard output: the tables go to stderr.
					w = cmd.ErrOrStderr()
				}
			}
			if scenario != "outage" {
				n := trials
				if n == 0 {
					n = simulate.DefaultContentionTrials
				}
				cfg := simulate.ContentionConfig{Trials: trials, Seed: seed}
				if !g.quiet {
					levels, policies := len(simulate.DefaultContentionClients), len(simulate.ContentionPolicies())
					fmt.Fprintf(g.stderr, "simulating contention: %d levels x %d policies, %s each (seed %d)\n",
						levels, policies, plural(n, "trial", "trials"), seed)
					tick := newTicker()
					cfg.Progress = func(row simulate.ContentionRow, done, total int) {
						if tick.due(done == total) {
							fmt.Fprintf(g.stderr, "contention: %d/%d rows (N = %d, %s)\n", done, total, row.Clients, row.Policy)
						}
					}
				}
				rows, err := simulate.Contention(cfg)
				if err != nil {
					return &usageError{err: err}
				}
				fmt.Fprintf(w, "Contention: N clients, one optimistic write each to one row (mean of %s, seed %d)\n\n", plural(n, "trial", "trials"), seed)
				if err := simulate.WriteContentionTable(w, rows); err != nil {
					return err
				}
			}
			if scenario != "contention" {
				if scenario == "all" {
					fmt.Fprintln(w)
				}
				cfg := simulate.OutageConfig{Clients: clients, Seed: seed}
				if !g.quiet {
					n := clients
					if n == 0 {
						n = simulate.DefaultOutageClients
					}
					fmt.Fprintf(g.stderr, "simulating an outage: %d policies, %s (seed %d)\n",
						len(simulate.OutagePolicies()), plural(n, "client", "clients"), seed)
					cfg.Progress = func(policy string, done, total int) {
						fmt.Fprintf(g.stderr, "outage: %d/%d policies (%s done)\n", done, total, policy)
					}
				}
				res, err := simulate.Outage(cfg)
				if err != nil {
					return &usageError{err: err}
				}
				fmt.Fprintf(w, "Outage: clients sending steadily to a service down for a while (seed %d)\n\n", seed)
				if err := simulate.WriteOutageTable(w, res); err != nil {
					return err
				}
				if svg != nil {
					if err := simulate.WriteOutageSVG(svg, res); err != nil {
						return err
					}
					if err := svg.commit(); err != nil {
						return err
					}
					if plot != "-" {
						fmt.Fprintf(w, "\nchart written to %s\n", plot)
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&scenario, "scenario", "all", "contention, outage or all")
	f.Uint64Var(&seed, "seed", 1, "seed of the simulation's random numbers")
	f.StringVar(&plot, "plot", "", "write an SVG chart of the outage's load over time to this file (- for stdout)")
	f.IntVar(&trials, "trials", 0, "contention trials averaged per row (0: 100)")
	f.IntVar(&clients, "clients", 0, "outage clients (0: 1,000)")
	f.BoolVar(&force, "force", false, "replace an existing chart file")
	completeValues(cmd, "scenario", "all\tboth scenarios", "contention\tN clients writing one row", "outage\ta fleet against a service that is down a while")
	return cmd
}

// ticker spaces progress lines: one every two seconds of wall time, and
// the last one always.
type ticker struct{ last time.Time }

func newTicker() *ticker { return &ticker{last: time.Now()} }

func (t *ticker) due(last bool) bool {
	if now := time.Now(); last || now.Sub(t.last) >= 2*time.Second {
		t.last = now
		return true
	}
	return false
}

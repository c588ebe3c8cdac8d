package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
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
succeeded. --plot writes the load on the service over time as an SVG chart.

Scenario overload: the same outage, watched for two minutes after the
return, under no retry, retry with a budget and pacing, and steady's
defaults (those plus a per-host circuit breaker and throttle per client,
driven by virtual time): attempts sent while the service was down against
no retry's, time to recover, and the requests the breaker refused.

Scenario flapping: the service is down 15s and up 15s in turn for the
minute, under the same policies.

Scenario limiter: one client fans 500 requests out 32 at a time to a
service behind a limiter of 50 requests per 5s that answers 429 with no
header at all; retry alone against steady's defaults, whose breaker learns
the limiter's window from its first run of 429s and books the sends in its
windows: time to finish against the limiter's floor, and the 429s drawn.

Scenario policies: the outage under every policy side by side, steady's
defaults included; --plot draws them all.`,
		Example: `  steady simulate
  steady simulate --scenario outage --plot outage.svg
  steady simulate --scenario overload
  steady simulate --scenario limiter
  steady simulate --scenario policies --plot policies.svg
  steady simulate --scenario contention --trials 20 --seed 7`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(scenarios, scenario) {
				return usagef("--scenario %q: want %s", scenario, strings.Join(scenarios, ", "))
			}
			if trials < 0 {
				return usagef("--trials %d: want a whole number of trials, 1 or more (0: %d)", trials, simulate.DefaultContentionTrials)
			}
			if clients < 0 {
				return usagef("--clients %d: want a whole number of clients, 1 or more (0: %d)", clients, simulate.DefaultOutageClients)
			}
			if plot != "" && scenario != "all" && scenario != "outage" && scenario != "policies" {
				return usagef("--plot draws the outage's load; use --scenario outage, policies or all")
			}
			if scenario == "limiter" {
				return runLimiter(cmd, seed)
			}
			if scenario == "overload" || scenario == "flapping" || scenario == "policies" {
				return runOverload(cmd, g, scenario, clients, seed, plot, force)
			}
			w, svg, err := plotOutput(cmd, plot, force)
			if err != nil {
				return err
			}
			if svg != nil {
				defer svg.abort()
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
	f.StringVar(&scenario, "scenario", "all", strings.Join(scenarios, ", ")+" (all: contention and outage)")
	f.Uint64Var(&seed, "seed", 1, "seed of the simulation's random numbers")
	f.StringVar(&plot, "plot", "", "write an SVG chart of the outage's load over time to this file (- for stdout)")
	f.IntVar(&trials, "trials", 0, "contention trials averaged per row (0: 100)")
	f.IntVar(&clients, "clients", 0, "outage clients (0: 1,000)")
	f.BoolVar(&force, "force", false, "replace an existing chart file")
	completeValues(cmd, "scenario", "all\tcontention and outage", "contention\tN clients writing one row",
		"outage\ta fleet against a service that is down a while",
		"overload\tthe outage with steady's circuit breaker and throttle",
		"flapping\ta service down and up in turn",
		"limiter\ta limiter answering 429 without headers",
		"policies\tevery policy side by side, with the plot")
	return cmd
}

// scenarios are the values of --scenario, in the order help lists them.
var scenarios = []string{"all", "contention", "outage", "overload", "flapping", "limiter", "policies"}

// runLimiter runs the headerless-429 scenario and prints its table.
func runLimiter(cmd *cobra.Command, seed uint64) error {
	runs, err := simulate.Limiter(simulate.LimiterConfig{Seed: seed})
	if err != nil {
		return &usageError{err: err}
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Limiter: a fan-out against a limiter that answers 429 without headers (seed %d)\n\n", seed)
	return simulate.WriteLimiterTable(w, runs)
}

// plotOutput opens --plot's file, if one is asked for, and returns where
// the tables go: standard output, or standard error when the chart is
// standard output.
func plotOutput(cmd *cobra.Command, plot string, force bool) (io.Writer, *output, error) {
	w := cmd.OutOrStdout()
	if plot == "" {
		return w, nil, nil
	}
	svg, err := createOutput(cmd.Context(), plot, force, w)
	if err != nil {
		return nil, nil, err
	}
	if plot == "-" {
		w = cmd.ErrOrStderr()
	}
	return w, svg, nil
}

// runOverload runs one of the scenarios of overload control: overload and
// flapping print the overload table, policies the outage table of every
// policy and, with --plot, their chart.
func runOverload(cmd *cobra.Command, g *globals, scenario string, clients int, seed uint64, plot string, force bool) error {
	w, svg, err := plotOutput(cmd, plot, force)
	if err != nil {
		return err
	}
	if svg != nil {
		defer svg.abort()
	}
	cfg := simulate.OutageConfig{Clients: clients, Seed: seed}
	run, title := simulate.OverloadOutage, "Overload: an outage under load, with and without steady's circuit breaker"
	switch scenario {
	case "flapping":
		run, title = simulate.Flapping, "Flapping: a service down and up in turn"
	case "policies":
		cfg.Policies = simulate.AllPolicies()
		run, title = simulate.Outage, "Every policy side by side: an outage under load"
	}
	if !g.quiet {
		fmt.Fprintf(g.stderr, "simulating %s (seed %d)\n", scenario, seed)
		cfg.Progress = func(policy string, done, total int) {
			fmt.Fprintf(g.stderr, "%s: %d/%d policies (%s done)\n", scenario, done, total, policy)
		}
	}
	res, err := run(cfg)
	if err != nil {
		return &usageError{err: err}
	}
	fmt.Fprintf(w, "%s (seed %d)\n\n", title, seed)
	write := simulate.WriteOverloadTable
	if scenario == "policies" {
		write = simulate.WriteOutageTable
	}
	if err := write(w, res); err != nil {
		return err
	}
	if svg == nil {
		return nil
	}
	if err := simulate.WriteOutageSVG(svg, res); err != nil {
		return err
	}
	if err := svg.commit(); err != nil {
		return err
	}
	if plot != "-" {
		fmt.Fprintf(w, "\nchart written to %s\n", plot)
	}
	return nil
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

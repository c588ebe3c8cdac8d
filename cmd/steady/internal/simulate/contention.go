package simulate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// Defaults of a [ContentionConfig], after the backoff-and-jitter study whose
// model scenario 1 reproduces.
const (
	DefaultContentionTrials   = 100
	DefaultContentionMaxCalls = 1_000_000
	DefaultNetworkMean        = 10 * time.Millisecond
	DefaultNetworkStdDev      = 2 * time.Millisecond
	ContentionBaseBackoff     = 5 * time.Millisecond
	ContentionMaxBackoff      = 2 * time.Second
)

// DefaultContentionClients are the contention levels reported by default.
var DefaultContentionClients = []int{10, 50, 100, 190}

// A ContentionPolicy is one way of waiting between the attempts of a write.
type ContentionPolicy struct {
	Name string
	// Immediate re-tries at once after a failure, without consulting Policy:
	// the "no backoff" line.
	Immediate bool
	// Jitter spreads each backoff.
	Jitter Jitter
	// Policy bounds every wait: its InitialBackoff and MaxBackoff count.
	// MaxAttempts does not: a client writes until it succeeds.
	Policy retry.Policy
}

// ContentionPolicies returns the five policies of the study: no backoff, and
// exponential backoff from 5 ms capped at 2 s without jitter, with full,
// equal and decorrelated jitter.
func ContentionPolicies() []ContentionPolicy {
	p := retry.Policy{InitialBackoff: ContentionBaseBackoff, MaxBackoff: ContentionMaxBackoff}
	return []ContentionPolicy{
		{Name: "no backoff", Immediate: true},
		{Name: "exponential", Jitter: JitterNone, Policy: p},
		{Name: "full jitter", Jitter: JitterFull, Policy: p},
		{Name: "equal jitter", Jitter: JitterEqual, Policy: p},
		{Name: "decorrelated", Jitter: JitterDecorrelated, Policy: p},
	}
}

// ContentionConfig describes scenario 1. The zero value is the study.
type ContentionConfig struct {
	// Clients lists the contention levels, each a number of clients writing
	// the same row (nil: [DefaultContentionClients]).
	Clients []int
	// Trials is the number of independent runs averaged per level and
	// policy (0: 100).
	Trials int
	// Policies are compared in this order (nil: [ContentionPolicies]).
	Policies []ContentionPolicy
	// NetworkMean and NetworkStdDev describe the one-way network delay, a
	// normal distribution truncated to positive values (0: 10 ms and 2 ms).
	NetworkMean, NetworkStdDev time.Duration
	// MaxCalls bounds the writes of one trial; a trial that needs more is
	// cut off and counted in [ContentionRow.Unfinished] (0: 1,000,000).
	MaxCalls int
	// Seed selects the random numbers; the same seed gives the same rows.
	Seed uint64
	// Progress, when set, is called after each row with the rows done and
	// the rows in all, on the calling goroutine.
	Progress func(row ContentionRow, done, total int)

	// trace, when set by a test, sees every wait the simulator takes.
	trace func(waitTrace)
}

// waitTrace is one wait taken by a client, with the arguments it came from.
type waitTrace struct {
	client, retry int
	prev, wait    time.Duration
	r             float64
}

// ContentionRow is the mean outcome of one policy at one contention level.
type ContentionRow struct {
	Policy  string
	Clients int
	Trials  int
	// Calls is the mean number of writes sent per trial, failed and
	// successful: the work the row's store had to do.
	Calls float64
	// Completion is the mean time from the start to the last successful
	// write, when the store committed it.
	Completion time.Duration
	// Unfinished counts trials cut off by MaxCalls; their numbers are
	// included, so a row with any is a lower bound.
	Unfinished int
}

// CallsPerClient is the mean number of writes each client sent.
func (r ContentionRow) CallsPerClient() float64 { return r.Calls / float64(r.Clients) }

func (c ContentionConfig) withDefaults() ContentionConfig {
	if c.Clients == nil {
		c.Clients = slices.Clone(DefaultContentionClients)
	}
	if c.Trials == 0 {
		c.Trials = DefaultContentionTrials
	}
	if c.Policies == nil {
		c.Policies = ContentionPolicies()
	}
	if c.NetworkMean == 0 {
		c.NetworkMean = DefaultNetworkMean
	}
	if c.NetworkStdDev == 0 {
		c.NetworkStdDev = DefaultNetworkStdDev
	}
	if c.MaxCalls == 0 {
		c.MaxCalls = DefaultContentionMaxCalls
	}
	return c
}

func (c ContentionConfig) validate() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Scenario: "contention", Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if len(c.Clients) == 0 {
		return bad("Clients", "is empty; want at least one contention level")
	}
	for _, n := range c.Clients {
		if n < 1 || n > 1_000_000 {
			return bad("Clients", "contains %d; want 1 to 1,000,000 clients", n)
		}
	}
	if c.Trials < 0 {
		return bad("Trials", "is %d; want 0 (default) or more", c.Trials)
	}
	if c.NetworkMean < 0 || c.NetworkStdDev < 0 {
		return bad("NetworkMean", "or NetworkStdDev is negative (%v, %v)", c.NetworkMean, c.NetworkStdDev)
	}
	if c.MaxCalls < 0 {
		return bad("MaxCalls", "is %d; want 0 (default) or more", c.MaxCalls)
	}
	return validatePolicies("contention", len(c.Policies), func(i int) (string, retry.Policy, bool) {
		p := c.Policies[i]
		return p.Name, p.Policy, !p.Immediate
	})
}

// validatePolicies checks that policies have distinct, non-empty names and
// that every policy the simulator will consult is valid.
func validatePolicies(scenario string, n int, at func(int) (name string, p retry.Policy, used bool)) error {
	if n == 0 {
		return &ConfigError{Scenario: scenario, Field: "Policies", Problem: "is empty; want at least one"}
	}
	seen := make(map[string]bool, n)
	for i := range n {
		name, p, used := at(i)
		if name == "" || seen[name] {
			return &ConfigError{Scenario: scenario, Field: "Policies",
				Problem: fmt.Sprintf("[%d] has an empty or repeated name %q; names label the output", i, name)}
		}
		seen[name] = true
		if !used {
			continue
		}
		if err := p.Validate(); err != nil {
			return &ConfigError{Scenario: scenario, Field: "Policies",
				Problem: fmt.Sprintf("[%d] %q is invalid", i, name), Err: err}
		}
	}
	return nil
}

// Contention runs scenario 1: for each contention level and policy, the
// configured number of trials of N clients each making one optimistic write
// to one shared row. Rows come level by level, policies in order.
func Contention(cfg ContentionConfig) ([]ContentionRow, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	net := newNetwork(cfg.NetworkMean, cfg.NetworkStdDev)
	q := newQueue(10*time.Millisecond, 1024)
	rows := make([]ContentionRow, 0, len(cfg.Clients)*len(cfg.Policies))
	for _, n := range cfg.Clients {
		for _, p := range cfg.Policies {
			row := ContentionRow{Policy: p.Name, Clients: n, Trials: cfg.Trials}
			var calls, completion float64
			for trial := range cfg.Trials {
				r := stream(cfg.Seed, p.Name, uint64(n), uint64(trial))
				q.reset()
				t := contentionTrial(q, p, n, net, r, cfg.MaxCalls, cfg.trace)
				calls += float64(t.calls)
				completion += float64(t.last)
				if !t.done {
					row.Unfinished++
				}
			}
			if cfg.Trials > 0 {
				row.Calls = calls / float64(cfg.Trials)
				row.Completion = time.Duration(completion / float64(cfg.Trials))
			}
			rows = append(rows, row)
			if cfg.Progress != nil {
				cfg.Progress(row, len(rows), len(cfg.Clients)*len(cfg.Policies))
			}
		}
	}
	return rows, nil
}

// contender is one client of a contention trial.
type contender struct {
	readAt   time.Duration // when the store last served it the row's version
	failures int
	prevWait time.Duration
}

type trialResult struct {
	calls int
	last  time.Duration // commit time of the last successful write
	done  bool
}

// contentionTrial runs one trial. An attempt is a read and then a write,
// each a round trip. The read is served one network delay after the attempt
// starts; its answer takes another delay back, and the write carrying the
// version read takes a third to reach the store, which commits it only if
// no other write committed since the read was served. A failed writer hears
// so after a fourth delay, waits as its policy says, and starts over. All
// clients start at time 0. Events run in time order, so every commit before
// a write's arrival is known when the write arrives: one event per write
// suffices, and the read needs none.
func contentionTrial(q *queue, p ContentionPolicy, n int, net network, r *rand.Rand, maxCalls int, trace func(waitTrace)) trialResult {
	clients := make([]contender, n)
	for i := range clients {
		clients[i].readAt = net.delay(r)
		q.push(clients[i].readAt+net.delay(r)+net.delay(r), 0, job{client: int32(i)})
	}
	lastCommit := time.Duration(-1) // before the start: nothing committed yet
	var res trialResult
	for {
		e, ok := q.pop()
		if !ok {
			break
		}
		if res.calls >= maxCalls {
			return res
		}
		res.calls++
		c := &clients[e.client]
		if lastCommit <= c.readAt {
			lastCommit, res.last = e.at, e.at
			continue
		}
		c.failures++
		var wait time.Duration
		if !p.Immediate {
			u := r.Float64()
			wait = delay(p.Policy, p.Jitter, c.failures, c.prevWait, u)
			if trace != nil {
				trace(waitTrace{client: int(e.client), retry: c.failures, prev: c.prevWait, wait: wait, r: u})
			}
			c.prevWait = wait
		}
		start := e.at + net.delay(r) + wait
		c.readAt = start + net.delay(r)
		q.push(c.readAt+net.delay(r)+net.delay(r), 0, e.job)
	}
	res.done = true
	return res
}

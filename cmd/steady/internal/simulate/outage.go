package simulate

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// Defaults of an [OutageConfig], argued in decision record 102. In short:
// at 50 requests a second per client the budget's ratio (5 re-sends a
// second) is above its floor (3); the service has 20% headroom over the
// offered load and admits a request only if it can start it within 100 ms.
const (
	DefaultOutageClients  = 1000
	DefaultOutageRate     = 50.0
	DefaultCapacityFactor = 1.2
	DefaultQueueLimit     = 100 * time.Millisecond
	DefaultBefore         = 5 * time.Second
	DefaultDown           = 60 * time.Second
	DefaultAfter          = 30 * time.Second
	DefaultReset          = 1 * time.Second
	DefaultRecoveredShare = 0.99
	// Bin is the width of the time bins of [OutageRun]'s series.
	Bin = time.Second
)

// An OutagePolicy is how every client of scenario 2 sends its requests.
type OutagePolicy struct {
	Name string
	// Policy drives each request's attempts as the retrying transport
	// would: MaxAttempts (1: no retry), its full-jitter backoff and
	// server-hint wait, MaxRetryAfter.
	//
	// Policy.Budget, when set, is a template: each client gets its own
	// [budget.Budget] with the template's Ratio, MinPerSecond and MaxTokens,
	// as a client process would share one budget across its requests.
	// Policy.Pacer, when set, gives each client its own [ratelimit.Pacer]
	// (the template's is not used), fed the
	// service's quota fields and asked for every attempt's slot, as the
	// transport does (a first attempt when it is issued, a re-send when its
	// wait is decided, for the instant it would be sent): requests wait for
	// a spent quota's reset and are then released one every Window/Limit
	// of the announced quota, or, when none was announced, together plus
	// the jitter the pacer sized for them. The
	// stall budget is
	// not modelled: no wait here comes near the default 60 s of silence.
	// Rand and Reporter are not used: the simulator draws its own numbers
	// and reports nothing.
	Policy retry.Policy
	// SharedBudget makes the clients a fleet on one budget: every client
	// draws on a single [budget.Budget] made from the template, as processes
	// sharing it through a [budget.Store] do (the store keeps the same
	// arithmetic; its leases of two re-sends are not modelled).
	SharedBudget bool
	// Overload, when set, is a template: each client gets its own
	// [breaker.Breaker] made from it, asked about every attempt as the
	// transport asks Policy.Overload (which the simulator ignores), with
	// the virtual instant. Its Rand and OnChange are the simulator's.
	Overload *breaker.Config
}

// OutagePolicies returns the four policies of scenario 2: no retry (one
// attempt), then with 5 attempts and the library's default backoff (500 ms
// doubling, full jitter): retry, retry with a default budget per client, and
// the same with rate-limit pacing.
func OutagePolicies() []OutagePolicy {
	return []OutagePolicy{
		{Name: "no retry", Policy: retry.Policy{MaxAttempts: 1}},
		{Name: "retry", Policy: retry.Policy{MaxAttempts: 5}},
		{Name: "retry+budget", Policy: retry.Policy{MaxAttempts: 5, Budget: &budget.Budget{}}},
		{Name: "budget+pacing", Policy: retry.Policy{MaxAttempts: 5, Budget: &budget.Budget{}, Pacer: new(ratelimit.Pacer)}},
	}
}

// OutageConfig describes scenario 2: clients sending at a steady rate to a
// service that is down for a while and then returns with finite capacity.
// Each zero field means the default in its comment.
type OutageConfig struct {
	// Clients is the number of independent clients (0: 1000).
	Clients int
	// Progress, when set, is called as each policy's run ends, with its
	// name, the runs done and the runs in all; calls never overlap.
	Progress func(policy string, done, total int)
	// Rate is each client's requests a second, issued as a Poisson process
	// (0: 50).
	Rate float64
	// Capacity is the requests a second the service completes once back
	// (0: 1.2 × Clients × Rate).
	Capacity float64
	// QueueLimit is the longest a request may wait for the service to start
	// it; one that would wait longer is refused with a 503 (0: 100 ms).
	QueueLimit time.Duration
	// Before, Down and After are the healthy stretch before the outage, the
	// outage, and the stretch after it; requests are issued throughout and
	// followed until they end (0: 5 s, 60 s, 30 s).
	Before, Down, After time.Duration
	// Reset is the reset the service's 503s announce in their RateLimit
	// fields, whole seconds (0: 1 s; negative: no RateLimit fields). Their
	// RateLimit-Policy announces each client's share of Capacity a second
	// as its quota.
	Reset time.Duration
	// Flap, when positive, makes the outage flap: through the Down
	// stretch the service is down for Flap and up for Flap in turn,
	// starting down (0: down throughout).
	Flap time.Duration
	// RetryAfter, when positive, is sent as Retry-After on every 503; every
	// retrying policy then waits it out, as the transport does (0: none).
	RetryAfter time.Duration
	// NetworkMean and NetworkStdDev describe the one-way network delay
	// (0: 10 ms and 2 ms).
	NetworkMean, NetworkStdDev time.Duration
	// RecoveredShare is the share of the offered load the service must
	// deliver in a bin to count as recovered (0: 0.99).
	RecoveredShare float64
	// Policies are compared in this order (nil: [OutagePolicies]).
	Policies []OutagePolicy
	// Seed selects the random numbers; the same seed gives the same result.
	Seed uint64

	// trace, when set by a test, sees every pacing hold a client takes and
	// every held request's send. It is called from the goroutine of the
	// policy's run.
	trace func(holdTrace)
	// unannounced, when set by a test, leaves RateLimit-Policy out of the
	// 503s, so pacers know the reset but not the quota.
	unannounced bool
}

// holdTrace is one pacing hold: at the virtual instant at, a request of
// client was told by its pacer to wait hold, a slot of a spaced release when
// spaced is set, and was to wait wait, jittered with r up to the jitter the
// pacer sized when not spaced. When
// woke is set it is instead the send of a held request, at at.
type holdTrace struct {
	client   int32
	at, hold time.Duration
	wait     time.Duration
	jitter   time.Duration // the ceiling the pacer sized
	r        float64
	spaced   bool
	woke     bool
}

func (c OutageConfig) withDefaults() OutageConfig {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.Clients == 0 {
		c.Clients = DefaultOutageClients
	}
	if c.Rate == 0 {
		c.Rate = DefaultOutageRate
	}
	if c.Capacity == 0 {
		c.Capacity = DefaultCapacityFactor * float64(c.Clients) * c.Rate
	}
	def(&c.QueueLimit, DefaultQueueLimit)
	def(&c.Before, DefaultBefore)
	def(&c.Down, DefaultDown)
	def(&c.After, DefaultAfter)
	def(&c.Reset, DefaultReset)
	def(&c.NetworkMean, DefaultNetworkMean)
	def(&c.NetworkStdDev, DefaultNetworkStdDev)
	if c.RecoveredShare == 0 {
		c.RecoveredShare = DefaultRecoveredShare
	}
	if c.Policies == nil {
		c.Policies = OutagePolicies()
	}
	return c
}

// maxOutageRequests and maxOutageAttempts bound the work of one policy's
// run, so a mistyped rate or attempt count fails at once instead of running
// for hours.
const (
	maxOutageRequests = 1e8
	maxOutageAttempts = 20
)

func (c OutageConfig) validate() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Scenario: "outage", Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	switch {
	case c.Clients < 1 || c.Clients > 1_000_000:
		return bad("Clients", "is %d; want 1 to 1,000,000", c.Clients)
	case !finite(c.Rate) || c.Rate <= 0:
		return bad("Rate", "is %v; want a positive number of requests a second", c.Rate)
	case !finite(c.Capacity) || c.Capacity <= 0:
		return bad("Capacity", "is %v; want a positive number of requests a second", c.Capacity)
	case c.QueueLimit < 0:
		return bad("QueueLimit", "is negative (%v)", c.QueueLimit)
	case c.Before < 0 || c.Down < 0 || c.After < 0:
		return bad("Before", "Down or After is negative (%v, %v, %v)", c.Before, c.Down, c.After)
	case c.Before%Bin != 0 || c.Down%Bin != 0 || c.After%Bin != 0:
		return bad("Before", "Down or After is not whole seconds (%v, %v, %v); the series are 1 s bins", c.Before, c.Down, c.After)
	case c.Before+c.Down+c.After > 24*time.Hour:
		return bad("After", "makes the run longer than a day (%v)", c.Before+c.Down+c.After)
	case c.Reset > 0 && c.Reset%time.Second != 0:
		return bad("Reset", "is %v; the RateLimit field carries whole seconds", c.Reset)
	case c.Flap < 0:
		return bad("Flap", "is negative (%v)", c.Flap)
	case c.RetryAfter < 0:
		return bad("RetryAfter", "is negative (%v)", c.RetryAfter)
	case c.NetworkMean < 0 || c.NetworkStdDev < 0:
		return bad("NetworkMean", "or NetworkStdDev is negative (%v, %v)", c.NetworkMean, c.NetworkStdDev)
	case !finite(c.RecoveredShare) || c.RecoveredShare < 0 || c.RecoveredShare > 1:
		return bad("RecoveredShare", "is %v; want a share in (0, 1]", c.RecoveredShare)
	}
	if n := float64(c.Clients) * c.Rate * (c.Before + c.Down + c.After).Seconds(); n > maxOutageRequests {
		return bad("Rate", "gives about %.3g requests a policy; at most %.0g can be simulated", n, maxOutageRequests)
	}
	for i, p := range c.Policies {
		if p.Policy.MaxAttempts > maxOutageAttempts {
			return bad("Policies", "[%d] %q has MaxAttempts %d; at most %d can be simulated",
				i, p.Name, p.Policy.MaxAttempts, maxOutageAttempts)
		}
		if p.Overload != nil {
			if err := p.Overload.Validate(); err != nil {
				return &ConfigError{Scenario: "outage", Field: "Policies",
					Problem: fmt.Sprintf("[%d] %q has an invalid Overload", i, p.Name), Err: err}
			}
		}
	}
	return validatePolicies("outage", len(c.Policies), func(i int) (string, retry.Policy, bool) {
		p := c.Policies[i]
		return p.Name, p.Policy, true
	})
}

// OutageResult is the outcome of scenario 2, one run per policy.
type OutageResult struct {
	Config OutageConfig // as run, defaults filled in
	Runs   []OutageRun
}

// OutageRun is the outcome of one policy in scenario 2. Series are indexed
// by [Bin]: element i covers [i s, i+1 s) from the start of the run, up to
// the end of the last stretch.
type OutageRun struct {
	Policy string
	// Requests counts the logical requests issued; Succeeded those that
	// ended with a 200, on any attempt.
	Requests, Succeeded int64
	// AfterRequests and AfterSucceeded count the requests issued once the
	// service was back, and those that succeeded.
	AfterRequests, AfterSucceeded int64
	// DownFirst and DownAttempts count the first attempts and all attempts
	// that reached the service while it was down.
	DownFirst, DownAttempts int64
	// Recovered reports whether the service was healthy again by the end
	// of the run; Recovery is then the time from its return to the start of
	// the first bin from which on every bin is healthy: the service served
	// at least RecoveredShare of the attempts that reached it in the bin,
	// and as many as RecoveredShare of the requests offered in it.
	Recovered bool
	Recovery  time.Duration
	// Peak is the highest load of a bin from the service's return on, as a
	// multiple of its capacity.
	Peak float64
	// Stops counts requests that ended without success, by reason.
	Stops Stops
	// Opens counts how often a client's circuit opened (from closed or
	// half-open), over all clients; 0 without overload control.
	Opens int64
	// Load counts the attempts reaching the service, Served those of them
	// it served rather than refused, and Offered the requests issued.
	Load, Offered, Served []int64
}

// Stops counts requests that ended without success, by the reason retrying
// stopped (the retry package's stop reasons).
type Stops struct {
	Exhausted   int64 // attempts ran out, or retrying was off ([retry.ErrExhausted])
	Budget      int64 // the budget refused a re-send ([retry.ErrBudget])
	RetryAfter  int64 // the server asked for too long a wait ([retry.ErrRetryAfter])
	RateLimited int64 // the pacing hold was too long ([retry.ErrRateLimited])
	Overload    int64 // the client's breaker refused the attempt ([retry.ErrOverload])
}

// Amplification is the load the service saw while down, relative to the
// load the clients' requests alone would have put on it: attempts over first
// attempts.
func (r OutageRun) Amplification() float64 { return ratio(r.DownAttempts, r.DownFirst) }

// SuccessAfter is the share of the requests issued once the service was
// back that succeeded.
func (r OutageRun) SuccessAfter() float64 { return ratio(r.AfterSucceeded, r.AfterRequests) }

// SuccessOverall is the share of all requests that succeeded, outage
// included.
func (r OutageRun) SuccessOverall() float64 { return ratio(r.Succeeded, r.Requests) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Outage runs scenario 2 once per policy. Every policy faces the same
// requests: each client's arrivals come from its own random stream.
//
// The policies' runs share nothing, so they run side by side on up to
// GOMAXPROCS goroutines, each writing only its own result; Outage returns
// when all are done, and the result does not depend on how they were
// scheduled.
func Outage(cfg OutageConfig) (OutageResult, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return OutageResult{}, err
	}
	res := OutageResult{Config: cfg, Runs: make([]OutageRun, len(cfg.Policies))}
	slots := make(chan struct{}, min(runtime.GOMAXPROCS(0), len(cfg.Policies)))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i, p := range cfg.Policies {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			res.Runs[i] = newOutageSim(&cfg, p).run()
			if cfg.Progress != nil {
				mu.Lock()
				done++
				cfg.Progress(p.Name, done, len(cfg.Policies))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return res, nil
}

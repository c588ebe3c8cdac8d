package simulate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/retry"
)

// Defaults of a [LimiterConfig]: a 32-way fan-out of 500 parts against a
// fixed-window limiter of 50 requests per 5 s, as the real limiter.
const (
	DefaultLimiterParts   = 500
	DefaultLimiterWorkers = 32
	DefaultLimiterLimit   = 50
	DefaultLimiterWindow  = 5 * time.Second
)

// LimiterConfig describes the headerless-429 scenario: one client fans
// Parts requests out over Workers at a time to a service behind a
// fixed-window limiter that admits Limit requests per Window, each window
// opened by the first request after the last one ended (as
// express-rate-limit's memory store), and answers the rest 429 with no
// header at all, so there is no quota to pace by.
// Each zero field means the default in its comment.
type LimiterConfig struct {
	Parts   int           // requests to make (0: 500)
	Workers int           // the fan-out's bound on requests in flight (0: 32)
	Limit   int           // requests the limiter admits per window (0: 50)
	Window  time.Duration // the limiter's window (0: 5 s)
	// Policies are compared in this order (nil: [LimiterPolicies]).
	Policies []OutagePolicy
	Seed     uint64
}

// LimiterPolicies returns the policies of the headerless-429 scenario,
// each with the default attempts: retry without overload control (the
// backoff alone spaces the 429s' re-sends, and a part whose attempts run
// out in a closed window fails), and [SteadyPolicy], whose breaker learns
// the limiter's window from its first run of 429s and books the sends in
// its windows, with AIMD on the concurrency.
func LimiterPolicies() []OutagePolicy {
	return []OutagePolicy{{Name: "retry", Policy: retry.Policy{}}, SteadyPolicy()}
}

// LimiterRun is the outcome of one policy in the headerless-429 scenario.
type LimiterRun struct {
	Policy string
	// Done is when the last part ended; Floor the least time the limiter
	// allows for all parts: the start of the window that admits the last.
	Done, Floor time.Duration
	// Succeeded and Failed count the parts; Refused the 429s drawn.
	Succeeded, Failed, Refused int64
	// Attempts counts every attempt sent.
	Attempts int64
}

// OverFloor is Done as a multiple of Floor.
func (r LimiterRun) OverFloor() float64 {
	if r.Floor <= 0 {
		return 0
	}
	return r.Done.Seconds() / r.Floor.Seconds()
}

func (c LimiterConfig) withDefaults() LimiterConfig {
	if c.Parts == 0 {
		c.Parts = DefaultLimiterParts
	}
	if c.Workers == 0 {
		c.Workers = DefaultLimiterWorkers
	}
	if c.Limit == 0 {
		c.Limit = DefaultLimiterLimit
	}
	if c.Window == 0 {
		c.Window = DefaultLimiterWindow
	}
	if c.Policies == nil {
		c.Policies = LimiterPolicies()
	}
	return c
}

func (c LimiterConfig) validate() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Scenario: "limiter", Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case c.Parts < 1 || c.Parts > 1_000_000:
		return bad("Parts", "is %d; want 1 to 1,000,000", c.Parts)
	case c.Workers < 1 || c.Workers > 10_000:
		return bad("Workers", "is %d; want 1 to 10,000", c.Workers)
	case c.Limit < 1:
		return bad("Limit", "is %d; want 1 or more", c.Limit)
	case c.Window < time.Millisecond:
		return bad("Window", "is %v; want 1ms or more", c.Window)
	}
	return validatePolicies("limiter", len(c.Policies), func(i int) (string, retry.Policy, bool) {
		p := c.Policies[i]
		return p.Name, p.Policy, true
	})
}

// Limiter runs the headerless-429 scenario once per policy.
func Limiter(cfg LimiterConfig) ([]LimiterRun, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	runs := make([]LimiterRun, len(cfg.Policies))
	for i, p := range cfg.Policies {
		r, err := newLimiterSim(&cfg, p)
		if err != nil {
			return nil, err
		}
		runs[i] = r.run()
	}
	return runs, nil
}

// Event kinds of the headerless-429 scenario.
const (
	lvStart   uint8 = iota // a worker takes a part, or a re-send's wait is over: ask the breaker
	lvSend                 // the breaker's hold is over: take a slot, then send
	lvArrive               // an attempt reaches the limiter
	lvOK                   // a 200 reaches the client
	lvRefused              // a 429 reaches the client
)

// limiterSim is one policy's run of the headerless-429 scenario.
type limiterSim struct {
	cfg         *LimiterConfig
	policy      retry.Policy
	maxAttempts int
	q           *queue
	rng         *rand.Rand
	net         network
	brk         *breaker.Breaker // nil without overload control

	next     int           // the next part to take
	inflight int           // attempts holding a breaker slot
	waiting  []job         // attempts waiting for a slot, in order
	opened   time.Duration // when the limiter's current window opened; -1 before the first
	admitted int           // requests it admitted in it
	out      LimiterRun
}

func newLimiterSim(cfg *LimiterConfig, p OutagePolicy) (*limiterSim, error) {
	s := &limiterSim{
		cfg:         cfg,
		policy:      p.Policy,
		maxAttempts: p.Policy.MaxAttempts,
		q:           newQueue(5*time.Millisecond, 8192),
		rng:         stream(cfg.Seed, "limiter "+p.Name),
		net:         newNetwork(DefaultNetworkMean, DefaultNetworkStdDev),
		opened:      -1,
	}
	if s.maxAttempts == 0 {
		s.maxAttempts = retry.DefaultMaxAttempts
	}
	s.policy.Budget, s.policy.Pacer, s.policy.Overload = nil, nil, nil // no quota fields: the pacer learns nothing, and one client's budget floor covers its re-sends
	if p.Overload != nil {
		bc := *p.Overload
		bc.MaxConcurrency = cfg.Workers // as the facade: MaxConcurrency 0 is its Concurrency
		bc.Rand = stream(cfg.Seed, "limiter breaker", 0).Float64
		b, err := breaker.New(bc)
		if err != nil {
			return nil, &ConfigError{Scenario: "limiter", Field: "Policies", Problem: fmt.Sprintf("%q has an invalid Overload", p.Name), Err: err}
		}
		s.brk = b
	}
	s.out.Policy = p.Name
	s.out.Floor = time.Duration((cfg.Parts-1)/cfg.Limit) * cfg.Window
	return s, nil
}

func (s *limiterSim) run() LimiterRun {
	for range min(s.cfg.Workers, s.cfg.Parts) {
		s.take(0)
	}
	for {
		e, ok := s.q.pop()
		if !ok {
			break
		}
		switch e.kind() {
		case lvStart:
			s.start(e.at, e.job)
		case lvSend:
			s.acquire(e.at, e.job)
		case lvArrive:
			s.arrive(e.at, e.job)
		case lvOK:
			s.answered(e.at, e.job, true)
		case lvRefused:
			s.answered(e.at, e.job, false)
		}
	}
	return s.out
}

// take starts the next part on a free worker at now, if any is left.
func (s *limiterSim) take(now time.Duration) {
	if s.next >= s.cfg.Parts {
		return
	}
	s.next++
	s.start(now, job{})
}

// start asks the breaker about the attempt, as the transport does before
// each: a refusal ends the part; its hold spaces the send.
func (s *limiterSim) start(now time.Duration, r job) {
	if s.brk == nil {
		s.send(now, r)
		return
	}
	tk, err := s.brk.Admit(epoch.Add(now), host, "", r.attempt > 0)
	if err != nil {
		s.end(now, r, false)
		return
	}
	r.ticket = tk
	s.q.push(now+tk.Hold(), lvSend, r)
}

// acquire takes a slot under the breaker's concurrency limit, or queues
// the attempt until one is freed, as the transport's admit: a hold that
// [breaker.Ticket.Rehold] extends (an attempt waiting for a probe's
// verdict) is waited out first, and an attempt whose window was refused
// while it queued is held again. The simulator counts the slots itself,
// so [breaker.Ticket.Acquire] is called only when it will not block.
func (s *limiterSim) acquire(now time.Duration, r job) {
	if hold := r.ticket.Rehold(epoch.Add(now)); hold > 0 {
		s.q.push(now+hold, lvSend, r)
		return
	}
	if limit, _ := s.brk.Limit(host, ""); limit > 0 && s.inflight >= limit {
		s.waiting = append(s.waiting, r)
		return
	}
	_ = r.ticket.Acquire(context.Background()) // never blocks: a slot is free
	if !r.ticket.Sendable() {
		s.q.push(now+r.ticket.Rehold(epoch.Add(now)), lvSend, r)
		return
	}
	s.inflight++
	s.send(now, r)
}

func (s *limiterSim) send(now time.Duration, r job) {
	r.attempt++
	s.out.Attempts++
	s.q.push(now+s.net.delay(s.rng), lvArrive, r)
}

// arrive is the limiter: a fixed window opened by the first request after
// the last one ended, admitting Limit requests in each and refusing the
// rest with a bare 429.
func (s *limiterSim) arrive(now time.Duration, r job) {
	if s.opened < 0 || now >= s.opened+s.cfg.Window {
		s.opened, s.admitted = now, 0
	}
	back := now + s.net.delay(s.rng)
	if s.admitted >= s.cfg.Limit {
		s.q.push(back, lvRefused, r)
		return
	}
	s.admitted++
	s.q.push(back, lvOK, r)
}

// answered settles the attempt with the breaker and frees its slot, then
// ends the part or schedules its re-send after the transport's backoff.
func (s *limiterSim) answered(now time.Duration, r job, ok bool) {
	booked := false
	if r.ticket != nil {
		o := breaker.Success
		if !ok {
			o = breaker.Limited
		}
		r.ticket.Done(epoch.Add(now), o, 0)
		booked = !ok && r.ticket.Booked()
		if !ok && r.ticket.Scout() {
			r.attempt-- // a scout's 429 is not a spent attempt
		}
		r.ticket = nil
		s.inflight--
		s.wake(now)
	}
	if ok {
		s.end(now, r, true)
		return
	}
	s.out.Refused++
	if int(r.attempt) >= s.maxAttempts {
		s.end(now, r, false)
		return
	}
	wait := delay(s.policy, JitterFull, int(r.attempt), r.prevWait, s.rng.Float64())
	if booked {
		wait = limitedWait(s.policy, s.rng.Float64())
	}
	r.prevWait = wait
	s.q.push(now+wait, lvStart, r)
}

// wake hands freed slots to the attempts waiting for one, in order.
func (s *limiterSim) wake(now time.Duration) {
	for len(s.waiting) > 0 {
		if limit, _ := s.brk.Limit(host, ""); limit > 0 && s.inflight >= limit {
			return
		}
		r := s.waiting[0]
		s.waiting = s.waiting[1:]
		s.acquire(now, r)
	}
}

// end closes a part and gives its worker the next.
func (s *limiterSim) end(now time.Duration, r job, ok bool) {
	if ok {
		s.out.Succeeded++
	} else {
		s.out.Failed++
	}
	s.out.Done = max(s.out.Done, now)
	s.take(now)
}

package simulate

import (
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// DefaultFlap is the half period of the flapping scenario's service: down
// 15 s, up 15 s, through the Down stretch. A shorter flap never opens a
// circuit at the defaults: a minute's window then holds as many successes
// as failures.
const DefaultFlap = 15 * time.Second

// DefaultOverloadAfter is the After stretch of the overload scenarios: two
// of the breaker's default windows, the time the goal gives a client to be
// back to its baseline success.
const DefaultOverloadAfter = 2 * time.Minute

// SteadyPolicy is what the facade does by default: 5 attempts with the
// default backoff, a retry budget and pacing per client, and a per-host
// [breaker.Breaker] with the package's defaults per client.
func SteadyPolicy() OutagePolicy {
	return OutagePolicy{
		Name:     "steady",
		Policy:   retry.Policy{MaxAttempts: 5, Budget: &budget.Budget{}, Pacer: new(ratelimit.Pacer)},
		Overload: &breaker.Config{},
	}
}

// OverloadPolicies returns the policies of the overload scenarios: no
// retry, the budget with pacing (steady without overload control), and
// [SteadyPolicy].
func OverloadPolicies() []OutagePolicy {
	all := OutagePolicies()
	return []OutagePolicy{all[0], all[3], SteadyPolicy()}
}

// AllPolicies returns every policy side by side: [OutagePolicies], then
// [SteadyPolicy].
func AllPolicies() []OutagePolicy { return append(OutagePolicies(), SteadyPolicy()) }

// OverloadOutage is the overload scenario: the outage of [Outage] under
// [OverloadPolicies]. Zero fields of cfg mean what they mean there.
// After 0 means [DefaultOverloadAfter].
func OverloadOutage(cfg OutageConfig) (OutageResult, error) {
	if cfg.Policies == nil {
		cfg.Policies = OverloadPolicies()
	}
	if cfg.After == 0 {
		cfg.After = DefaultOverloadAfter
	}
	return Outage(cfg)
}

// Flapping is the flapping scenario: through the Down stretch the service
// is down for Flap and up for Flap in turn, starting down (Flap 0:
// [DefaultFlap]), under [OverloadPolicies] unless cfg names others.
func Flapping(cfg OutageConfig) (OutageResult, error) {
	if cfg.Flap == 0 {
		cfg.Flap = DefaultFlap
	}
	return OverloadOutage(cfg)
}

// newBreakers makes one breaker per client from p's template. The
// throttle's draws come from a stream of their own, so the run stays a
// function of its seed; circuit changes are counted into out.
func newBreakers(cfg *OutageConfig, p OutagePolicy, out *OutageRun) []*breaker.Breaker {
	draws := stream(cfg.Seed, "breaker", 0)
	bc := *p.Overload
	bc.Rand = draws.Float64
	bc.OnChange = func(c breaker.Change) {
		if c.State == breaker.Open && c.Prev != breaker.Open {
			out.Opens++
		}
	}
	bs := make([]*breaker.Breaker, cfg.Clients)
	for c := range bs {
		b, err := breaker.New(bc)
		if err != nil {
			panic(err) // validate checked the template
		}
		bs[c] = b
	}
	return bs
}

// admit asks the client's breaker whether r's next attempt may be sent at
// at, as the transport does before each attempt, and keeps the ticket in r.
// A refusal ends the request. The breakers' concurrency limit moves only on
// a 429 without quota fields, which this service never sends, so a
// ticket's slot is always free and its hold is 0.
func (s *outageSim) admit(at time.Duration, r *job) bool {
	now := epoch.Add(at)
	tk, err := s.breakers[r.client].Admit(now, host, "", r.attempt > 0)
	if err != nil {
		s.finish(*r, false, &s.out.Stops.Overload)
		return false
	}
	r.ticket = tk
	return true
}

// settle tells r's breaker what its attempt's answer said, at at.
func (s *outageSim) settle(at time.Duration, r job, o breaker.Outcome, retryAfter time.Duration) {
	if r.ticket != nil {
		r.ticket.Done(epoch.Add(at), o, retryAfter)
	}
}

// DownRatio is the attempts r sent into the outage over those base sent:
// the overload goal compares a policy with no retry.
func (r OutageRun) DownRatio(base OutageRun) float64 { return ratio(r.DownAttempts, base.DownAttempts) }

package simulate

import (
	"testing"
	"time"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/retry"
)

// A fleet of quiet processes, each at two requests a second, behind one
// service: with a budget each, every process's floor (3 re-sends a second)
// is above its traffic and the outage's load is multiplied; with one budget
// shared by the fleet, the floor is the fleet's and re-sends stay near a
// tenth of the traffic.
func TestFleetSharesOneBudget(t *testing.T) {
	t.Parallel()
	cfg := OutageConfig{Clients: 50, Rate: 2, Before: 2 * time.Second, Down: 10 * time.Second, After: 10 * time.Second, Seed: 5}
	cfg.Policies = []OutagePolicy{
		{Name: "budget each", Policy: retry.Policy{MaxAttempts: 5, Budget: &budget.Budget{}}},
		{Name: "one budget", Policy: retry.Policy{MaxAttempts: 5, Budget: &budget.Budget{}}, SharedBudget: true},
	}
	res := runOutage(t, cfg)
	each, shared := res.Runs[0].Amplification(), res.Runs[1].Amplification()
	t.Logf("outage amplification, 50 processes at 2 req/s: a budget each %.3fx, one shared budget %.3fx", each, shared)
	// The fleet's bound is the ratio plus the re-sends one bucket banks
	// before the outage (a tenth of a percent of a one-minute outage's load,
	// one percent of this ten-second one), not a bank per process.
	bound := 1 + budget.DefaultRatio + budget.DefaultMaxTokens/float64(res.Runs[1].DownFirst)
	if shared > bound+0.002 {
		t.Errorf("one shared budget amplified the outage %.3fx; want at most %.3fx (1.1x and the bank)", shared, bound)
	}
	if each < shared+0.5 {
		t.Errorf("a budget each amplified %.3fx, one shared %.3fx; want the fleet's floor to matter", each, shared)
	}
}

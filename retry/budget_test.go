package retry_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/retry"
)

func TestBudgetStopsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &budget.Budget{MinPerSecond: -1}
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(503)}}
		tr := retry.New(s, retry.Policy{MaxAttempts: 5, Budget: b, Rand: constRand(0)})
		// 20 first attempts deposit 2 re-sends in all: the first call's four
		// re-sends are cut to two, and the call stops on ErrBudget.
		for range 19 {
			b.Deposit()
		}
		ctx, out := retry.WithOutcome(t.Context())
		resp, err := tr.RoundTrip(get(ctx, api))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if s.attempts() != 3 || !errors.Is(out.Stop, retry.ErrBudget) {
			t.Errorf("attempts = %d, stop %v; want 3 and ErrBudget", s.attempts(), out.Stop)
		}
	})
}

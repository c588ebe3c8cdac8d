package fanout_test

import (
	"context"
	"testing"
	"time"

	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/retry"
)

// A call the pacer refused (a quota that resets past MaxRetryAfter) is a
// waiting error too: the interruption says how long until the reset, so a
// sleep-then-resume loop does not spin.
func TestInterruptionCarriesAPacingWait(t *testing.T) {
	refused := &retry.Error{Method: "GET", URL: "https://api.test/0", Reason: retry.ErrRateLimited, Wait: 90 * time.Minute}
	_, err := fanout.Run(context.Background(), []int{0, 1}, fanout.Options{},
		func(ctx context.Context, i int) (string, error) { return "", refused })
	in, ok := fanout.AsInterruption(err)
	if !ok {
		t.Fatalf("Run: %v, want an interruption", err)
	}
	if got := in.RetryAfter(); got != 90*time.Minute {
		t.Errorf("RetryAfter() = %v, want the quota's reset in 1h30m", got)
	}
}

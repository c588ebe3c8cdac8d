package steady_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/internal/wiretest"
)

// The README's FanOut + GetJSON pattern: a 429 asking for 30 s, beyond the
// policy's MaxRetryAfter, interrupts the run, and the interruption says how
// long to wait, read from the *RateLimitError through the one interface
// fanout reads. A wait of 0 would make a sleep-then-resume loop spin.
func TestFanOutInterruptionCarriesRateLimitWait(t *testing.T) {
	srv := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	p := fast()
	p.MaxRetryAfter = 10 * time.Second
	c := newClient(t, steady.Options{Policy: p})

	_, err := steady.FanOut(context.Background(), c, []string{"a", "b"}, fanout.Options{},
		func(ctx context.Context, id string) (map[string]any, error) {
			var v map[string]any
			return v, c.GetJSON(ctx, srv.URL+"/items/"+id, nil, &v)
		})
	in, ok := fanout.AsInterruption(err)
	if !ok {
		t.Fatalf("FanOut: %v, want an interruption", err)
	}
	if got, want := in.RetryAfter(), 30*time.Second; got != want {
		t.Errorf("Interruption.RetryAfter() = %v, want %v", got, want)
	}
}

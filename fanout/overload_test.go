package fanout_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/retry"
)

// Items refused by an open circuit are transient: the run is interrupted,
// not failed, nothing reaches the host, and the interruption's RetryAfter
// is the wait the breaker gave, read through the refusal's RetryAfter.
func TestRunInterruptedByOpenCircuitCarriesItsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			return respond(r, 503, "down"), nil
		})
		b, err := breaker.New(breaker.Config{MinRequests: 1})
		if err != nil {
			t.Fatal(err)
		}
		rt := retry.New(inner, retry.Policy{MaxAttempts: 1, Overload: b})
		fetch := getVia(rt)
		if _, err := fetch(t.Context(), 0); err == nil {
			t.Fatal("the 503 that trips the circuit succeeded")
		}
		time.Sleep(time.Second)
		items := []int{1, 2, 3, 4, 5, 6, 7, 8}
		_, err = fanout.Run(t.Context(), items, fanout.Options{Concurrency: 4}, fetch)
		in, ok := fanout.AsInterruption(err)
		if !ok {
			t.Fatalf("err = %v, want an interruption", err)
		}
		if got, want := in.RetryAfter(), 4*time.Second; got != want {
			t.Errorf("RetryAfter = %v, want %v, the open delay left", got, want)
		}
		if !errors.Is(err, breaker.ErrOpen) || !errors.Is(err, retry.ErrOverload) {
			t.Errorf("err = %v, want ErrOpen and ErrOverload in its chain", err)
		}
		if got := sent.Load(); got != 1 {
			t.Errorf("%d requests reached the host, want only the one that tripped it", got)
		}
	})
}

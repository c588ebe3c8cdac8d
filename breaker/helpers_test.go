package breaker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/steadyhttp/steady/breaker"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// never is a throttle draw that never rejects; always one that rejects
// whenever the probability is above 0.
func never() float64  { return 0.999999 }
func always() float64 { return 0 }

func newBreaker(t *testing.T, cfg breaker.Config) *breaker.Breaker {
	t.Helper()
	if cfg.Rand == nil {
		cfg.Rand = never
	}
	b, err := breaker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// send admits a first attempt to host at now and closes it with o; it
// returns the refusal, if any.
func send(b *breaker.Breaker, now time.Time, host string, o breaker.Outcome) error {
	tk, err := b.Admit(now, host, "", false)
	if err != nil {
		return err
	}
	tk.Done(now, o, 0)
	return nil
}

// trip sends failures to host until its circuit opens.
func trip(t *testing.T, b *breaker.Breaker, now time.Time, host string) {
	t.Helper()
	for range 1000 {
		if err := send(b, now, host, breaker.Failure); err != nil {
			if !errors.Is(err, breaker.ErrOpen) {
				t.Fatalf("tripping %s: %v", host, err)
			}
			return
		}
	}
	t.Fatalf("%s did not trip", host)
}

func refusal(t *testing.T, err error, cause error) *breaker.Error {
	t.Helper()
	var e *breaker.Error
	if !errors.As(err, &e) || !errors.Is(err, cause) {
		t.Fatalf("err = %v, want a *breaker.Error for %v", err, cause)
	}
	return e
}

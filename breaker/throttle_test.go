package breaker_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/steadyhttp/steady/breaker"
)

// noTrip keeps the circuit closed so the throttle alone is seen.
const noTrip = 1 << 30

func TestThrottleFollowsFormulaCapped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		draw     float64
		rejected bool
	}{
		{"below the cap", 0.79, true},
		{"at the cap", 0.8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			draw := 0.999
			b := newBreaker(t, breaker.Config{MinRequests: noTrip, Rand: func() float64 { return draw }})
			for range 100 {
				send(b, t0, "h", breaker.Failure)
			}
			draw = tt.draw
			err := send(b, t0, "h", breaker.Failure)
			if got := errors.Is(err, breaker.ErrThrottled); got != tt.rejected {
				t.Fatalf("rejected = %v (%v), want %v", got, err, tt.rejected)
			}
			if tt.rejected {
				if e := refusal(t, err, breaker.ErrThrottled); e.RetryAfter() != 12*time.Second {
					t.Errorf("RetryAfter = %v, want one bucket, 12s", e.RetryAfter())
				}
			}
		})
	}
}

func TestThrottleFloor(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{MinRequests: noTrip, Rand: always})
	for i := range 20 {
		if err := send(b, t0, "h", breaker.Failure); err != nil {
			t.Fatalf("request %d rejected below the floor of 20: %v", i, err)
		}
	}
	if err := send(b, t0, "h", breaker.Failure); !errors.Is(err, breaker.ErrThrottled) {
		t.Fatalf("at the floor: %v, want throttled", err)
	}
}

func TestThrottleSparesResendsProbesAndQuota(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{MinRequests: noTrip, Rand: always})
	for range 100 {
		send(b, t0, "h", breaker.Limited)
		send(b, t0, "h", breaker.Paced)
	}
	if err := send(b, t0, "h", breaker.Success); err != nil {
		t.Fatalf("429s fed the throttle: %v", err)
	}
	for range 500 {
		send(b, t0, "h", breaker.Failure)
	}
	if _, err := b.Admit(t0, "h", "", true); err != nil {
		t.Fatalf("a re-send was throttled: %v", err)
	}
	refusal(t, send(b, t0, "h", breaker.Success), breaker.ErrThrottled)
}

// Through a long total outage the throttle lets about a fifth through, never
// none, and once the host recovers the calls succeed again within two
// windows.
func TestThrottleNeverRejectsAllAndRecovers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	b := newBreaker(t, breaker.Config{MinRequests: noTrip, Rand: rng.Float64})
	now := t0
	var sent int
	const outage = 10 * time.Minute
	for ; now.Before(t0.Add(outage)); now = now.Add(100 * time.Millisecond) {
		if send(b, now, "h", breaker.Failure) == nil {
			sent++
		}
	}
	calls := int(outage / (100 * time.Millisecond))
	if share := float64(sent) / float64(calls); share < 0.19 || share > 0.25 {
		t.Errorf("sent %d of %d during the outage (%.3f), want about a fifth", sent, calls, share)
	}
	// After two windows, every 10 s of calls succeeds at 99% or more.
	recovered := now
	ok, n := 0, 0
	for ; now.Before(recovered.Add(5 * time.Minute)); now = now.Add(100 * time.Millisecond) {
		if send(b, now, "h", breaker.Success) == nil {
			ok++
		}
		if n++; n == 100 {
			if now.Sub(recovered) > 4*time.Minute && ok < 99 {
				t.Fatalf("%v after recovery, %d of 100 calls went through, want 99", now.Sub(recovered), ok)
			}
			ok, n = 0, 0
		}
	}
}

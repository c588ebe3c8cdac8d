package retry_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/steadyhttp/steady/retry"
)

func errorsAs[T any](err error, target *T) bool { return errors.As(err, target) }

func TestBackoff(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	cases := []struct {
		name         string
		n            int
		r            float64
		initial, max time.Duration
		want         time.Duration
	}{
		{"first retry, top of range", 1, 0, 500 * ms, 30 * time.Second, 500 * ms},
		{"first retry, half", 1, 0.5, 500 * ms, 30 * time.Second, 250 * ms},
		{"second retry doubles", 2, 0, 500 * ms, 30 * time.Second, time.Second},
		{"fourth retry", 4, 0, 500 * ms, 30 * time.Second, 4 * time.Second},
		{"capped", 10, 0, 500 * ms, 30 * time.Second, 30 * time.Second},
		{"attempt 63 does not overflow", 63, 0, 500 * ms, 30 * time.Second, 30 * time.Second},
		{"attempt 1000 does not overflow", 1000, 0.25, 500 * ms, 30 * time.Second, 22500 * ms},
		{"huge cap does not overflow", 200, 0, time.Second, time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)},
		{"never zero", 1, 0.9999999999, 500 * ms, 30 * time.Second, 1},
		{"full jitter, r=0.5, third retry", 3, 0.5, 100 * ms, 10 * time.Second, 200 * ms},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := retry.Backoff(c.n, c.r, c.initial, c.max)
			if got != c.want {
				t.Errorf("Backoff(%d, %v) = %v, want %v", c.n, c.r, got, c.want)
			}
			if got <= 0 || got > c.max {
				t.Errorf("Backoff(%d, %v) = %v, outside (0, %v]", c.n, c.r, got, c.max)
			}
		})
	}
}

func TestServerWait(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                     string
		hint                     time.Duration
		r                        float64
		maxBackoff, maxRetryWait time.Duration
		want                     time.Duration
	}{
		{"hint plus full jitter", 30 * time.Second, 0, 30 * time.Second, time.Minute, 31 * time.Second},
		{"hint plus half jitter, a tenth of the hint", 2 * time.Second, 0.5, 30 * time.Second, time.Minute, 2100 * time.Millisecond},
		{"a hint of 1s is not 2s", time.Second, 0, 30 * time.Second, time.Minute, 1100 * time.Millisecond},
		{"a short hint still spreads 50ms", 100 * time.Millisecond, 0, 30 * time.Second, time.Minute, 150 * time.Millisecond},
		{"jitter bounded by MaxBackoff", 20 * time.Second, 0, 100 * time.Millisecond, time.Minute, 20100 * time.Millisecond},
		{"capped at MaxRetryAfter", 60 * time.Second, 0, 30 * time.Second, time.Minute, time.Minute},
		{"zero hint never immediate", 0, 0.9999999999, 30 * time.Second, time.Minute, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := retry.ServerWait(c.hint, c.r, c.maxBackoff, c.maxRetryWait); got != c.want {
				t.Errorf("ServerWait(%v, %v) = %v, want %v", c.hint, c.r, got, c.want)
			}
		})
	}
}

package breaker

import (
	"testing"
	"time"
)

func TestRejection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		requests, accepts int
		k, maxP, want     float64
	}{
		{"nothing counted", 0, 0, 2, 0.8, 0},
		{"all accepted", 100, 100, 2, 0.8, 0},
		{"half accepted is the knee", 100, 50, 2, 0.8, 0},
		{"a quarter accepted", 99, 25, 2, 0.8, 49.0 / 100},
		{"none accepted is capped", 1000, 0, 2, 0.8, 0.8},
		{"none accepted, cap 0.95", 9, 0, 2, 0.95, 0.9},
		{"K 1", 10, 5, 1, 0.8, 5.0 / 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rejection(tt.requests, tt.accepts, tt.k, tt.maxP)
			if d := got - tt.want; d > 1e-12 || d < -1e-12 {
				t.Errorf("rejection(%d, %d, %v, %v) = %v, want %v", tt.requests, tt.accepts, tt.k, tt.maxP, got, tt.want)
			}
		})
	}
}

func TestOpenDelay(t *testing.T) {
	t.Parallel()
	cfg := Config{}.withDefaults()
	tests := []struct {
		name       string
		n          int
		retryAfter time.Duration
		want       time.Duration
	}{
		{"first open", 0, 0, 5 * time.Second},
		{"one probe failed", 1, 0, 10 * time.Second},
		{"three probes failed", 3, 0, 40 * time.Second},
		{"bounded", 4, 0, time.Minute},
		{"no overflow", 1 << 30, 0, time.Minute},
		{"Retry-After wins", 3, 2 * time.Second, 2 * time.Second},
		{"Retry-After of years is bounded", 0, 24 * 365 * 10 * time.Hour, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := openDelay(tt.n, tt.retryAfter, &cfg); got != tt.want {
				t.Errorf("openDelay(%d, %v) = %v, want %v", tt.n, tt.retryAfter, got, tt.want)
			}
		})
	}
}

func TestWindowRolls(t *testing.T) {
	t.Parallel()
	w := newWindow(10 * time.Second) // buckets of 1 s
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w.add(t0, tally{3, 1})
	w.add(t0.Add(500*time.Millisecond), tally{1, 1})
	w.add(t0.Add(5*time.Second), tally{2, 0})
	tests := []struct {
		name string
		at   time.Duration
		want tally
	}{
		{"all within", 9 * time.Second, tally{6, 2}},
		{"first bucket aged out", 10 * time.Second, tally{2, 0}},
		{"everything aged out", 15 * time.Second, tally{}},
		{"a slot reused after a lap", 20 * time.Second, tally{}},
	}
	for _, tt := range tests {
		if got := w.sum(t0.Add(tt.at)); got != tt.want {
			t.Errorf("%s: sum = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	w.add(t0.Add(20*time.Second), tally{1, 0})
	if got, want := w.sum(t0.Add(20*time.Second)), (tally{1, 0}); got != want {
		t.Errorf("after a lap: sum = %+v, want %+v", got, want)
	}
}

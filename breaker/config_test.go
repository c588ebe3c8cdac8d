package breaker_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/steadyhttp/steady/breaker"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   breaker.Config
		field string // "" for valid
	}{
		{"zero is the defaults", breaker.Config{}, ""},
		{"all set", breaker.Config{FailureRatio: 1, MinRequests: 1, Window: time.Second, OpenDelay: time.Second,
			MaxOpenDelay: time.Second, Probes: 3, K: 1.5, ThrottleWindow: time.Minute, MaxRejection: 0.95,
			ThrottleFloor: 1, MaxConcurrency: 32, MaxSpacing: time.Second, MaxHosts: 10}, ""},
		{"ratio above 1", breaker.Config{FailureRatio: 1.5}, "FailureRatio"},
		{"ratio NaN", breaker.Config{FailureRatio: math.NaN()}, "FailureRatio"},
		{"negative minimum", breaker.Config{MinRequests: -1}, "MinRequests"},
		{"negative window", breaker.Config{Window: -time.Second}, "Window"},
		{"window below a bucket", breaker.Config{Window: 5}, "Window"},
		{"negative open delay", breaker.Config{OpenDelay: -1}, "OpenDelay"},
		{"open delay above its max", breaker.Config{OpenDelay: 2 * time.Minute}, "OpenDelay"},
		{"negative max open delay", breaker.Config{MaxOpenDelay: -1}, "MaxOpenDelay"},
		{"negative probes", breaker.Config{Probes: -1}, "Probes"},
		{"K below 1", breaker.Config{K: 0.5}, "K"},
		{"K infinite", breaker.Config{K: math.Inf(1)}, "K"},
		{"negative throttle window", breaker.Config{ThrottleWindow: -1}, "ThrottleWindow"},
		{"rejection of all", breaker.Config{MaxRejection: 1}, "MaxRejection"},
		{"negative rejection", breaker.Config{MaxRejection: -0.1}, "MaxRejection"},
		{"negative floor", breaker.Config{ThrottleFloor: -1}, "ThrottleFloor"},
		{"negative concurrency", breaker.Config{MaxConcurrency: -1}, "MaxConcurrency"},
		{"negative spacing", breaker.Config{MaxSpacing: -1}, "MaxSpacing"},
		{"negative hosts", breaker.Config{MaxHosts: -1}, "MaxHosts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var ce *breaker.ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field {
				t.Fatalf("Validate = %v, want a *ConfigError for %s", err, tt.field)
			}
			if _, err := breaker.New(tt.cfg); err == nil {
				t.Errorf("New accepted an invalid config")
			}
		})
	}
}

func TestOnChangeReportsEveryTransition(t *testing.T) {
	t.Parallel()
	var got []breaker.Change
	b := newBreaker(t, breaker.Config{MaxConcurrency: 4, OnChange: func(c breaker.Change) { got = append(got, c) }})
	trip(t, b, t0, "h")
	send(b, t0.Add(5*time.Second), "h", breaker.Success)
	tk, _ := b.Admit(t0.Add(5*time.Second), "h", "k", false)
	tk.Done(t0.Add(5*time.Second), breaker.Limited, 0)
	want := []struct {
		prev, state breaker.State
		key         string
		wait        time.Duration
		limit       int
	}{
		{breaker.Closed, breaker.Open, "", 5 * time.Second, 4},
		{breaker.Open, breaker.HalfOpen, "", 0, 4},
		{breaker.HalfOpen, breaker.Closed, "", 0, 4},
		{breaker.Closed, breaker.Closed, "k", 0, 2},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d changes %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		c := got[i]
		if c.Host != "h" || c.Key != w.key || c.Prev != w.prev || c.State != w.state || c.Wait != w.wait || c.Limit != w.limit {
			t.Errorf("change %d = %+v, want %+v", i, c, w)
		}
	}
}

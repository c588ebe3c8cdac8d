package retry_test

import (
	"testing"
	"time"

	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/retry"
)

func TestFromSettings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		env       map[string]string
		attempts  int
		stall     time.Duration
		keepsRest bool
		read      time.Duration // the read timeout that results
	}{
		{"defaults", nil, 5, 60 * time.Second, true, 0},
		{"retries off", map[string]string{"STEADY_RETRIES": "0"}, 1, 60 * time.Second, true, 0},
		{"stall off", map[string]string{"STEADY_STALL_TIMEOUT": "0"}, 5, -1, true, 0},
		{"both set", map[string]string{"STEADY_RETRIES": "9", "STEADY_STALL_TIMEOUT": "2.5"}, 10, 2500 * time.Millisecond, true, 2500 * time.Millisecond},
		{"long stall", map[string]string{"STEADY_STALL_TIMEOUT": "600"}, 5, 600 * time.Second, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := config.FromLookup("", func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
			if err != nil {
				t.Fatal(err)
			}
			p := retry.FromSettings(retry.Policy{MaxBackoff: time.Second}, s)
			if p.MaxAttempts != c.attempts || p.StallTimeout != c.stall || p.MaxBackoff != time.Second {
				t.Errorf("policy = %+v, want %d attempts, stall %v, MaxBackoff kept", p, c.attempts, c.stall)
			}
			if p.ReadTimeout != c.read {
				t.Errorf("ReadTimeout = %v, want %v: a read silent past the stall budget is cut at the budget", p.ReadTimeout, c.read)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

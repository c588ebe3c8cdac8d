package breaker_test

import (
	"testing"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/event"
)

// Check answers what Admit would answer a re-send, and changes nothing: an
// open circuit stays open past its delay until someone is admitted, and
// no probe place is taken.
func TestCheckRefusesResendsWithoutAdmitting(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	if err := b.Check(t0, "h", ""); err != nil {
		t.Fatalf("Check of an unknown host = %v, want nil", err)
	}
	send(b, t0, "h", breaker.Success)
	if err := b.Check(t0, "h", ""); err != nil {
		t.Fatalf("Check of a closed circuit = %v, want nil", err)
	}
	trip(t, b, t0, "h")
	e := refusal(t, b.Check(t0.Add(time.Second), "h", ""), breaker.ErrOpen)
	if got, want := e.RetryAfter(), 4*time.Second; got != want {
		t.Errorf("open: RetryAfter = %v, want %v (the time left)", got, want)
	}
	later := t0.Add(6 * time.Second)
	e = refusal(t, b.Check(later, "h", ""), breaker.ErrOpen)
	if e.RetryAfter() <= 0 {
		t.Errorf("past the delay: RetryAfter = %v, want a wait", e.RetryAfter())
	}
	if got := b.State("h", ""); got != breaker.Open {
		t.Errorf("state after Check = %v, want open: Check changes nothing", got)
	}
	tk, err := b.Admit(later, "h", "", false)
	if err != nil || !tk.Probe() {
		t.Fatalf("first attempt after Check: %v, probe %v; want the probe", err, tk != nil && tk.Probe())
	}
	refusal(t, b.Check(later, "h", ""), breaker.ErrOpen)
	tk.Done(later, breaker.Success, 0)
	if err := b.Check(later, "h", ""); err != nil {
		t.Errorf("Check after the probe closed it = %v, want nil", err)
	}
}

func TestChangeEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    breaker.Change
		want event.Event
	}{
		{"opens",
			breaker.Change{Time: t0, Host: "h", Key: "secret-hash", Prev: breaker.Closed, State: breaker.Open, Wait: 5 * time.Second,
				Failures: 12, Requests: 20, Limit: 8},
			event.Event{Kind: event.BreakerChanged, Time: t0, Host: "h", Reason: "open", Wait: 5 * time.Second, Done: 12, Total: 20}},
		{"half-open",
			breaker.Change{Time: t0, Host: "h", Prev: breaker.Open, State: breaker.HalfOpen},
			event.Event{Kind: event.BreakerChanged, Time: t0, Host: "h", Reason: "half-open"}},
		{"quota",
			breaker.Change{Time: t0, Host: "h", Key: "k", Prev: breaker.Closed, State: breaker.Closed, Limit: 1,
				Quota: 50, Period: 5 * time.Second, Spacing: 100 * time.Millisecond},
			event.Event{Kind: event.BreakerChanged, Time: t0, Host: "h", Reason: "limit", Wait: 5 * time.Second, Done: 50, Total: 1}},
	}
	for _, tt := range tests {
		if got := tt.c.Event(); got != tt.want {
			t.Errorf("%s: Event() = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

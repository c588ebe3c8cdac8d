package breaker_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/breaker"
)

func TestCircuitOpensOnRatioWithMinimum(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	for range 19 {
		if err := send(b, t0, "h", breaker.Failure); err != nil {
			t.Fatalf("refused before the minimum count: %v", err)
		}
	}
	if got := b.State("h", ""); got != breaker.Closed {
		t.Fatalf("state after 19 failures = %v, want closed", got)
	}
	send(b, t0, "h", breaker.Failure)
	if got := b.State("h", ""); got != breaker.Open {
		t.Fatalf("state after 20 failures = %v, want open", got)
	}
	e := refusal(t, send(b, t0.Add(2*time.Second), "h", breaker.Success), breaker.ErrOpen)
	if got, want := e.RetryAfter(), 3*time.Second; got != want {
		t.Errorf("RetryAfter = %v, want %v (the time left)", got, want)
	}
	if e.Host != "h" || !e.Retryable() {
		t.Errorf("refusal = %+v, want host h and retryable", e)
	}
}

func TestCircuitStaysClosedBelowRatio(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	for i := range 200 {
		o := breaker.Success
		if i%3 == 0 {
			o = breaker.Failure
		}
		if err := send(b, t0, "h", o); err != nil {
			t.Fatalf("attempt %d refused at a third failing: %v", i, err)
		}
	}
}

func TestFailuresAgeOutOfWindow(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	for range 19 {
		send(b, t0, "h", breaker.Failure)
	}
	later := t0.Add(time.Minute)
	send(b, later, "h", breaker.Failure)
	if got := b.State("h", ""); got != breaker.Closed {
		t.Errorf("state = %v, want closed: the 19 failures left the window", got)
	}
}

func TestQuotaAndNeutralNeverTrip(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	for _, o := range []breaker.Outcome{breaker.Limited, breaker.Paced, breaker.Neutral, breaker.Abandoned} {
		for range 100 {
			if err := send(b, t0, "h", o); err != nil {
				t.Fatalf("outcome %d tripped the circuit: %v", o, err)
			}
		}
	}
}

func TestResendsDoNotVote(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	send(b, t0, "h", breaker.Success)
	for range 100 {
		tk, err := b.Admit(t0, "h", "", true)
		if err != nil {
			t.Fatalf("re-send refused by a closed circuit: %v", err)
		}
		tk.Done(t0, breaker.Failure, 0)
	}
	if got := b.State("h", ""); got != breaker.Closed {
		t.Errorf("state = %v, want closed: one call's re-sends are not votes", got)
	}
}

func TestHalfOpenProbeClosesOrReopensWithBackoff(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	trip(t, b, t0, "h")
	now := t0.Add(5 * time.Second)
	for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute} {
		tk, err := b.Admit(now, "h", "", false)
		if err != nil || !tk.Probe() {
			t.Fatalf("round %d: admit = %v, probe %v; want a probe", i, err, tk != nil && tk.Probe())
		}
		tk.Done(now, breaker.Failure, 0)
		e := refusal(t, send(b, now, "h", breaker.Success), breaker.ErrOpen)
		if e.RetryAfter() != want {
			t.Fatalf("round %d: re-opened for %v, want %v", i, e.RetryAfter(), want)
		}
		now = now.Add(want)
	}
	if err := send(b, now, "h", breaker.Success); err != nil {
		t.Fatal(err)
	}
	if got := b.State("h", ""); got != breaker.Closed {
		t.Fatalf("after a good probe: %v, want closed", got)
	}
	trip(t, b, now, "h")
	e := refusal(t, send(b, now, "h", breaker.Success), breaker.ErrOpen)
	if e.RetryAfter() != 5*time.Second {
		t.Errorf("after closing, the next open lasts %v, want the base 5s", e.RetryAfter())
	}
}

func TestRetryAfterSetsOpenDelayBounded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		retryAfter time.Duration
		want       time.Duration
	}{
		{"seconds", 30 * time.Second, 30 * time.Second},
		{"years", 10 * 365 * 24 * time.Hour, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{MinRequests: 1})
			tk, _ := b.Admit(t0, "h", "", false)
			tk.Done(t0, breaker.Failure, tt.retryAfter)
			e := refusal(t, send(b, t0, "h", breaker.Success), breaker.ErrOpen)
			if e.RetryAfter() != tt.want {
				t.Errorf("open for %v, want %v", e.RetryAfter(), tt.want)
			}
		})
	}
}

func TestResendRefusedUnlessClosed(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	trip(t, b, t0, "h")
	later := t0.Add(time.Hour)
	_, err := b.Admit(later, "h", "", true)
	refusal(t, err, breaker.ErrOpen)
	if got := b.State("h", ""); got != breaker.HalfOpen {
		t.Fatalf("state = %v, want half-open", got)
	}
	tk, err := b.Admit(later, "h", "", false)
	if err != nil || !tk.Probe() {
		t.Fatalf("the probe went to a re-send: %v", err)
	}
	tk.Done(later, breaker.Abandoned, 0)
	if got := b.State("h", ""); got != breaker.HalfOpen {
		t.Fatalf("an abandoned probe changed the state to %v", got)
	}
	if err := send(b, later, "h", breaker.Neutral); err != nil {
		t.Fatalf("the next probe after an abandoned one: %v", err)
	}
	if got := b.State("h", ""); got != breaker.Closed {
		t.Errorf("a probe answered 404 left %v, want closed: the host serves", got)
	}
}

// A burst of goroutines at a half-open host lets exactly the probes through.
func TestHalfOpenFlood(t *testing.T) {
	t.Parallel()
	for _, probes := range []int{1, 3} {
		b := newBreaker(t, breaker.Config{Probes: probes})
		trip(t, b, t0, "h")
		at := t0.Add(5 * time.Second)
		var admitted, refused atomic.Int64
		var tickets sync.Map
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 1000 {
			wg.Go(func() {
				<-start
				tk, err := b.Admit(at, "h", "", false)
				if errors.Is(err, breaker.ErrOpen) {
					refused.Add(1)
					return
				}
				admitted.Add(1)
				tickets.Store(i, tk)
			})
		}
		close(start)
		wg.Wait()
		if admitted.Load() != int64(probes) || refused.Load() != int64(1000-probes) {
			t.Errorf("probes %d: admitted %d, refused %d", probes, admitted.Load(), refused.Load())
		}
		tickets.Range(func(_, v any) bool { v.(*breaker.Ticket).Done(at, breaker.Success, 0); return true })
	}
}

// One host down never slows another in the same breaker.
func TestPerHostIsolation(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{Rand: always})
	trip(t, b, t0, "down.example")
	for i := range 1000 {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		refusal(t, send(b, now, "down.example", breaker.Failure), breaker.ErrOpen)
		tk, err := b.Admit(now, "up.example", "", false)
		if err != nil || tk.Hold() != 0 {
			t.Fatalf("the healthy host was held (%v) or refused: %v", tk.Hold(), err)
		}
		tk.Done(now, breaker.Success, 0)
	}
	if c, s := b.Limit("up.example", ""); c != 0 || s != 0 {
		t.Errorf("healthy host limit %d, spacing %v; want none", c, s)
	}
}

func TestPerKeyIsolation(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	for range 20 {
		tk, _ := b.Admit(t0, "h", "key-a", false)
		tk.Done(t0, breaker.Failure, 0)
	}
	if b.State("h", "key-a") != breaker.Open || b.State("h", "key-b") != breaker.Closed || b.State("h", "") != breaker.Closed {
		t.Errorf("states a=%v b=%v none=%v; want only key a open",
			b.State("h", "key-a"), b.State("h", "key-b"), b.State("h", ""))
	}
}

// A flood of hosts keeps the map bounded and keeps a tripped host's state
// while idle hosts can be forgotten instead.
func TestHostileNumberOfHosts(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{MaxHosts: 64})
	trip(t, b, t0, "down.example")
	for i := range 100_000 {
		send(b, t0, "h"+string(rune('a'+i%26))+itoa(i), breaker.Success)
	}
	if got := breaker.Entries(b); got > 64 {
		t.Errorf("tracked %d entries, want at most 64", got)
	}
	if got := b.State("down.example", ""); got != breaker.Open {
		t.Errorf("the open host was forgotten before idle ones: %v", got)
	}
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(buf[n:])
		}
	}
}

// Admit and Done from many goroutines, on a few hosts, under -race.
func TestConcurrentAdmitDone(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{MinRequests: 5, MaxConcurrency: 4, MaxHosts: 3})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 500 {
				now := t0.Add(time.Duration(i) * 10 * time.Millisecond)
				host := "h" + itoa((g+i)%5)
				tk, err := b.Admit(now, host, "", i%4 == 0)
				if err != nil {
					continue
				}
				if err := tk.Acquire(context.Background()); err != nil {
					t.Error(err)
				}
				outcomes := []breaker.Outcome{breaker.Success, breaker.Failure, breaker.Limited, breaker.Paced, breaker.Neutral, breaker.Abandoned}
				tk.Done(now, outcomes[(g*7+i)%len(outcomes)], 0)
				b.State(host, "")
				b.Limit(host, "")
			}
		})
	}
	wg.Wait()
}

// A host whose slots are all taken, with callers queued for them, never
// makes a call to another host wait.
func TestSlotsPerHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, breaker.Config{MaxConcurrency: 1})
		now := time.Now()
		held, _ := b.Admit(now, "slow.example", "", false)
		if err := held.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		var queued sync.WaitGroup
		for range 10 {
			tk, _ := b.Admit(now, "slow.example", "", false)
			queued.Go(func() {
				if err := tk.Acquire(t.Context()); err == nil {
					tk.Done(time.Now(), breaker.Success, 0)
				}
			})
		}
		synctest.Wait()
		start := time.Now()
		other, _ := b.Admit(now, "fast.example", "", false)
		if err := other.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("the other host waited %v", waited)
		}
		other.Done(time.Now(), breaker.Success, 0)
		held.Done(time.Now(), breaker.Success, 0)
		queued.Wait()
	})
}

// An outcome the breaker does not know never closes a half-open circuit.
func TestUnknownOutcomeIsAbandoned(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	trip(t, b, t0, "h")
	later := t0.Add(time.Minute)
	tk, _ := b.Admit(later, "h", "", false)
	tk.Done(later, breaker.Outcome(0), 0)
	tk.Done(later, breaker.Success, 0) // a second Done does nothing
	if got := b.State("h", ""); got != breaker.HalfOpen {
		t.Errorf("state = %v, want half-open", got)
	}
}

package breaker_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/breaker"
)

// admitN admits n first attempts to h at now, each with a slot.
func admitN(t *testing.T, b *breaker.Breaker, now time.Time, n int) []*breaker.Ticket {
	t.Helper()
	var tks []*breaker.Ticket
	for range n {
		tk, err := b.Admit(now, "h", "", false)
		if err != nil {
			t.Fatal(err)
		}
		if err := tk.Acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
		tks = append(tks, tk)
	}
	return tks
}

// A burst of headerless 429s from one window cuts the limit once; the next
// window's cuts it again, down to 1, then spaces the sends, bounded.
func TestLimitHalvesOncePerWindowToBounds(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{MaxConcurrency: 16, MaxSpacing: 2 * time.Second})
	now := t0
	for _, want := range []int{8, 4, 2, 1} {
		c, _ := b.Limit("h", "")
		for _, tk := range admitN(t, b, now, c) {
			tk.Done(now, breaker.Limited, 0)
		}
		if got, _ := b.Limit("h", ""); got != want {
			t.Fatalf("after a window of %d 429s: limit %d, want %d", c, got, want)
		}
	}
	var spacing time.Duration
	for _, want := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 2 * time.Second, 2 * time.Second} {
		tk := admitN(t, b, now, 1)[0]
		now = now.Add(tk.Hold() + 100*time.Millisecond) // sent after its hold, answered in 100 ms
		tk.Done(now, breaker.Limited, 0)
		var c int
		c, spacing = b.Limit("h", "")
		if c != 1 || spacing != want {
			t.Fatalf("limit %d, spacing %v; want 1, %v", c, spacing, want)
		}
	}
	for range 16 {
		tk := admitN(t, b, now, 1)[0]
		now = now.Add(tk.Hold())
		tk.Done(now, breaker.Success, 0)
	}
	if c, s := b.Limit("h", ""); c != 1 || s != 0 {
		t.Fatalf("after 16 successes: limit %d, spacing %v; want 1, none", c, s)
	}
	for range 1000 {
		tk := admitN(t, b, now, 1)[0]
		tk.Done(now, breaker.Success, 0)
	}
	if c, _ := b.Limit("h", ""); c != 16 {
		t.Errorf("after many successes: limit %d, want the maximum 16", c)
	}
}

func TestHoldSpacesSends(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{MaxConcurrency: 1})
	tk := admitN(t, b, t0, 1)[0]
	tk.Done(t0.Add(50*time.Millisecond), breaker.Limited, 0) // spacing 100 ms
	now := t0.Add(50 * time.Millisecond)
	for i, want := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond} {
		tk, err := b.Admit(now, "h", "", false)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Hold() != want {
			t.Errorf("attempt %d held %v, want %v", i, tk.Hold(), want)
		}
		tk.Done(now, breaker.Abandoned, 0)
	}
}

func TestFirstCutOfUnlimitedHostHalvesInFlight(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	tks := admitN(t, b, t0, 10)
	for _, tk := range tks {
		tk.Done(t0, breaker.Limited, 0)
	}
	if c, _ := b.Limit("h", ""); c != 5 {
		t.Errorf("limit %d, want 5, half the 10 in flight", c)
	}
}

func TestPacedAndFailuresLeaveLimit(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{MaxConcurrency: 8, MinRequests: noTrip})
	for _, o := range []breaker.Outcome{breaker.Paced, breaker.Failure, breaker.Neutral, breaker.Abandoned} {
		for _, tk := range admitN(t, b, t0, 8) {
			tk.Done(t0, o, 0)
		}
	}
	if c, _ := b.Limit("h", ""); c != 8 {
		t.Errorf("limit %d, want 8: only headerless 429s cut it", c)
	}
}

// A call waiting for a slot ends when its context does; a freed slot wakes
// the next.
func TestAcquireWaitsAndHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, breaker.Config{MaxConcurrency: 1})
		holder := admitN(t, b, time.Now(), 1)[0]

		tk, _ := b.Admit(time.Now(), "h", "", false)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		if err := tk.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire = %v, want the deadline", err)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Errorf("waited %v, want 1s", waited)
		}
		tk.Done(time.Now(), breaker.Abandoned, 0)

		next, _ := b.Admit(time.Now(), "h", "", false)
		got := make(chan error)
		go func() { got <- next.Acquire(t.Context()) }()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("acquired a held slot: %v", err)
		default:
		}
		holder.Done(time.Now(), breaker.Success, 0)
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		next.Done(time.Now(), breaker.Success, 0)
		if c, _ := b.Limit("h", ""); c != 1 {
			t.Errorf("limit %d, want the maximum 1", c)
		}
	})
}

func TestAcquireWithEndedContext(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	tk, _ := b.Admit(t0, "h", "", false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tk.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire = %v, want context.Canceled", err)
	}
	tk.Done(t0, breaker.Abandoned, 0)
}

// A ticket's window is the one it is sent in: one admitted before a cut
// but given its slot after it was sent after the cut, so its 429 cuts
// again; one given its slot before the cut does not.
func TestCutCountsFromTheSlot(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{MaxConcurrency: 8})
	early := admitN(t, b, t0, 2)
	queued, err := b.Admit(t0, "h", "", false)
	if err != nil {
		t.Fatal(err)
	}
	early[0].Done(t0, breaker.Limited, 0) // 8 → 4
	early[1].Done(t0, breaker.Limited, 0) // same window: no cut
	if got, _ := b.Limit("h", ""); got != 4 {
		t.Fatalf("limit %d after one window, want 4", got)
	}
	if err := queued.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	queued.Done(t0, breaker.Limited, 0)
	if got, _ := b.Limit("h", ""); got != 2 {
		t.Errorf("limit %d after a 429 sent after the cut, want 2", got)
	}
}

// One cut a call: a re-send answered 429 leaves the limit and the
// spacing as they are; the call's first attempt cut them already.
func TestResendLimitedDoesNotCut(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{MaxConcurrency: 8})
	for range 5 {
		tk, err := b.Admit(t0, "h", "", true)
		if err != nil {
			t.Fatal(err)
		}
		if err := tk.Acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
		tk.Done(t0, breaker.Limited, 0)
	}
	if c, gap := b.Limit("h", ""); c != 8 || gap != 0 {
		t.Errorf("after re-sends answered 429: limit %d, spacing %v; want 8 and none", c, gap)
	}
}

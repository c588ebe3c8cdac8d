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
// window's cuts it again, down to 1 and no lower; successes grow it back
// to MaxConcurrency.
func TestLimitHalvesOncePerWindowToBounds(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{MaxConcurrency: 16})
	now := t0
	for _, want := range []int{8, 4, 2, 1, 1} {
		c, _ := b.Limit("h", "")
		for _, tk := range admitN(t, b, now, c) {
			tk.Done(now, breaker.Limited, 0)
		}
		if got, _ := b.Limit("h", ""); got != want {
			t.Fatalf("after a window of %d 429s: limit %d, want %d", c, got, want)
		}
	}
	for range 1000 {
		tk := admitN(t, b, now, 1)[0]
		tk.Done(now, breaker.Success, 0)
	}
	if c, _ := b.Limit("h", ""); c != 16 {
		t.Errorf("after many successes: limit %d, want the maximum 16", c)
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

// One cut a call: a re-send answered 429 leaves the limit as it is; the
// call's first attempt cut it already.
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

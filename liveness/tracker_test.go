package liveness_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/liveness"
)

func TestTrackerSilenceAndMark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := liveness.New()
		time.Sleep(7 * time.Second)
		if got := tr.Silence(); got != 7*time.Second {
			t.Fatalf("silence %v, want 7s", got)
		}
		tr.Mark()
		if got := tr.Silence(); got != 0 {
			t.Fatalf("silence after Mark %v, want 0", got)
		}
	})
}

func TestCreditNeverPassesNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cases := []struct {
			name    string
			silent  time.Duration
			credit  time.Duration
			silence time.Duration
		}{
			{"credit part of the silence", 10 * time.Second, 4 * time.Second, 6 * time.Second},
			{"credit all of it", 10 * time.Second, 10 * time.Second, 0},
			{"credit more than the silence stops at now", 10 * time.Second, time.Hour, 0},
			{"zero credit", 3 * time.Second, 0, 3 * time.Second},
			{"negative credit ignored", 3 * time.Second, -time.Second, 3 * time.Second},
			{"huge credit does not overflow", time.Second, time.Duration(1<<63 - 1), 0},
		}
		for _, c := range cases {
			tr := liveness.New()
			time.Sleep(c.silent)
			tr.Credit(c.credit)
			if got := tr.Silence(); got != c.silence {
				t.Errorf("%s: silence %v, want %v", c.name, got, c.silence)
			}
			if tr.Last().After(time.Now()) {
				t.Errorf("%s: stamp %v is in the future", c.name, tr.Last())
			}
		}
	})
}

func TestNewSinceAndZeroValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		time.Sleep(5 * time.Second)
		if got := liveness.NewSince(start).Silence(); got != 5*time.Second {
			t.Errorf("NewSince silence %v, want 5s", got)
		}
		var zero liveness.Tracker
		zero.Mark()
		if got := zero.Silence(); got != 0 {
			t.Errorf("zero value after Mark: silence %v", got)
		}
	})
}

func TestMarkNeverMovesBackwards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := liveness.New()
		time.Sleep(time.Second)
		tr.Mark()
		last := tr.Last()
		tr.Credit(time.Hour) // capped at now: no change
		tr.Mark()
		if tr.Last().Before(last) {
			t.Fatalf("stamp moved back")
		}
	})
}

func TestCounters(t *testing.T) {
	tr := liveness.New()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 100 {
				tr.CountAttempt(i%4 != 0)
			}
		})
	}
	wg.Wait()
	if tr.Attempts() != 800 || tr.Retries() != 600 {
		t.Fatalf("attempts %d retries %d, want 800 and 600", tr.Attempts(), tr.Retries())
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if liveness.From(ctx) != nil {
		t.Fatal("a bare context carries a tracker")
	}
	ctx2, tr := liveness.Ensure(ctx)
	if tr == nil || liveness.From(ctx2) != tr {
		t.Fatal("Ensure did not add its tracker")
	}
	ctx3, tr2 := liveness.Ensure(ctx2)
	if tr2 != tr || ctx3 != ctx2 {
		t.Fatal("Ensure replaced an existing tracker")
	}
}

func TestBodyInAttempt(t *testing.T) {
	ctx := context.Background()
	if _, ok := liveness.BodyInAttempt(ctx); ok {
		t.Fatal("a bare context asks for the body")
	}
	cases := []struct {
		limit, want int64
	}{{1 << 20, 1 << 20}, {0, -1}, {-5, -1}}
	for _, c := range cases {
		got, ok := liveness.BodyInAttempt(liveness.WithBodyInAttempt(ctx, c.limit))
		if !ok || got != c.want {
			t.Errorf("WithBodyInAttempt(%d): %d, %v; want %d", c.limit, got, ok, c.want)
		}
	}
	err := error(&liveness.BodyTooLargeError{Limit: 10})
	if !errors.Is(err, liveness.ErrBodyTooLarge) || err.Error() != "response body exceeds the limit of 10 bytes" {
		t.Errorf("BodyTooLargeError: %v", err)
	}
}

// BenchmarkMark is the cost of marking progress on every body read.
func BenchmarkMark(b *testing.B) {
	tr := liveness.New()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tr.Mark()
		}
	})
}

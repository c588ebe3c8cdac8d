package fanout_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/retry"
)

// The gate bounds attempts in flight, counted where they happen: in the
// inner transport. Odd items are answered 503 once, so items also sleep off
// backoffs, which must not hold a slot.
func TestConcurrencyBound(t *testing.T) {
	for _, tc := range []struct {
		name        string
		concurrency int
		items       int
		want        int64
	}{
		{"one slot", 1, 10, 1},
		{"four slots", 4, 40, 4},
		{"default", 0, 200, 32},
		{"more slots than items", 16, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var hw highWater
				var seen counter
				inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					hw.enter()
					defer hw.leave()
					time.Sleep(10 * time.Millisecond)
					if i := itemOf(r); i%2 == 1 && seen.add(i) == 1 {
						return respond(r, 503, ""), nil
					}
					return respond(r, 200, "ok"), nil
				})
				rt := retry.New(inner, retry.Policy{})
				res, err := fanout.Run(t.Context(), seq(tc.items), fanout.Options{Concurrency: tc.concurrency}, getVia(rt))
				if err != nil {
					t.Fatal(err)
				}
				if len(res) != tc.items {
					t.Fatalf("got %d results, want %d", len(res), tc.items)
				}
				if got := hw.most.Load(); got != tc.want {
					t.Errorf("most attempts in flight = %d, want %d", got, tc.want)
				}
			})
		})
	}
}

// Two fan-outs sharing one gate share its bound.
func TestSharedGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hw highWater
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			hw.enter()
			defer hw.leave()
			time.Sleep(10 * time.Millisecond)
			return respond(r, 200, "ok"), nil
		})
		rt := retry.New(inner, retry.Policy{})
		opt := fanout.Options{Concurrency: 3, Gate: semaphore.NewWeighted(3)}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for k := range errs {
			wg.Go(func() { _, errs[k] = fanout.Run(t.Context(), seq(30), opt, getVia(rt)) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if got := hw.most.Load(); got != 3 {
			t.Errorf("most attempts in flight across both runs = %d, want 3", got)
		}
	})
}

// The goroutines are bounded too: four items per slot run at once, however
// long the list.
func TestItemsInProgressBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hw highWater
		fetch := func(ctx context.Context, item int) (int, error) {
			hw.enter()
			defer hw.leave()
			time.Sleep(time.Millisecond)
			return item, nil
		}
		if _, err := fanout.Run(t.Context(), seq(10_000), fanout.Options{Concurrency: 2}, fetch); err != nil {
			t.Fatal(err)
		}
		if got := hw.most.Load(); got != 8 {
			t.Errorf("most items in progress = %d, want 8 (4 per slot)", got)
		}
	})
}

// The case the per-attempt gate exists for. One slot; item 0 holds it for
// 1.2 s, longer than the 1 s stall budget; items 1 and 2 always get 503.
// Their time queued behind item 0 is credited, so each still makes all
// three attempts and stops on the attempt limit, not the stall budget.
// Independent keeps item 1's failure from stopping item 2.
func TestQueuedWorkKeepsItsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts counter
		holding := make(chan struct{})
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			i := itemOf(r)
			attempts.add(i)
			if i == 0 {
				close(holding)
				time.Sleep(1200 * time.Millisecond)
				return respond(r, 200, "ok"), nil
			}
			return respond(r, 503, ""), nil
		})
		rt := retry.New(inner, retry.Policy{
			StallTimeout: time.Second, MaxAttempts: 3, InitialBackoff: time.Millisecond,
			Rand: func() float64 { return 0.5 },
		})
		get := getVia(rt)
		fetch := func(ctx context.Context, item int) (string, error) {
			if item > 0 {
				<-holding // item 0 takes the slot first
			}
			return get(ctx, item)
		}
		start := time.Now()
		res, err := fanout.Run(t.Context(), seq(3), fanout.Options{Concurrency: 1, Independent: true}, fetch)
		for i, want := range []int{1, 3, 3} {
			if got := attempts.get(i); got != want {
				t.Errorf("item %d: %d attempts, want %d", i, got, want)
			}
		}
		if res[0] != "ok" {
			t.Errorf("item 0 = %q, want ok", res[0])
		}
		var pe *fanout.PartialError
		if !errors.As(err, &pe) {
			t.Fatalf("err = %v, want a *PartialError", err)
		}
		for _, f := range pe.Failed {
			if !errors.Is(f, retry.ErrExhausted) || errors.Is(f, retry.ErrStalled) {
				t.Errorf("item %d stopped with %v, want attempts exhausted", f.Index, f.Err)
			}
		}
		if got, want := pe.Indexes(), []int{1, 2}; !slices.Equal(got, want) {
			t.Errorf("failed = %v, want %v", got, want)
		}
		if el := time.Since(start); el < 1200*time.Millisecond || el > 1300*time.Millisecond {
			t.Errorf("run took %v, want just over 1.2s", el)
		}
	})
}

// Without the credit, the same item queued 1.2 s behind a slot it waits for
// would have been stopped by the stall budget: this checks the test above
// can fail, by holding the slot outside the transport for the whole item.
func TestQueuedWorkWithoutCreditStalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts counter
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			attempts.add(itemOf(r))
			return respond(r, 503, ""), nil
		})
		rt := retry.New(inner, retry.Policy{StallTimeout: time.Second, MaxAttempts: 3, InitialBackoff: time.Millisecond})
		get := getVia(rt)
		fetch := func(ctx context.Context, item int) (string, error) {
			time.Sleep(1200 * time.Millisecond) // silent, and not a credited wait
			return get(ctx, item)
		}
		_, err := fanout.Run(t.Context(), seq(1), fanout.Options{Concurrency: 1}, fetch)
		if !errors.Is(err, retry.ErrStalled) {
			t.Errorf("err = %v, want stalled", err)
		}
		if got := attempts.get(0); got != 2 {
			t.Errorf("attempts = %d, want 2 (the first re-send is never withheld)", got)
		}
	})
}

// A plain fetch bounds itself with Acquire, and the context Acquire returns
// keeps a retry transport under it from taking a second slot (with one slot,
// that would deadlock, which synctest reports).
func TestAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hw highWater
		rt := retry.New(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return respond(r, 200, "ok"), nil
		}), retry.Policy{})
		get := getVia(rt)
		fetch := func(ctx context.Context, item int) (string, error) {
			ctx, release, err := fanout.Acquire(ctx)
			if err != nil {
				return "", err
			}
			defer release()
			hw.enter()
			defer hw.leave()
			time.Sleep(5 * time.Millisecond)
			return get(ctx, item)
		}
		res, err := fanout.Run(t.Context(), seq(20), fanout.Options{Concurrency: 2}, fetch)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 20 || res[19] != "ok" {
			t.Errorf("results = %v", res)
		}
		if got := hw.most.Load(); got != 2 {
			t.Errorf("most fetches holding a slot = %d, want 2", got)
		}
	})
}

func TestAcquireOutsideFanOut(t *testing.T) {
	ctx := t.Context()
	got, release, err := fanout.Acquire(ctx)
	if err != nil || got != ctx {
		t.Fatalf("Acquire outside a fan-out = %v, %v; want the same context, nil", got, err)
	}
	release()
	release()
}

func TestAcquireCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		holding := make(chan struct{})
		fetch := func(ctx context.Context, item int) (int, error) {
			ctx, release, err := fanout.Acquire(ctx)
			if err != nil {
				return 0, err
			}
			defer release()
			if item == 0 {
				close(holding)
				<-ctx.Done()
				return 0, ctx.Err()
			}
			return item, nil
		}
		go func() { <-holding; cancel() }()
		_, err := fanout.Run(ctx, seq(2), fanout.Options{Concurrency: 1}, fetch)
		if err != ctx.Err() || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want the context's own error", err)
		}
	})
}

// Each item is its own call: its own tracker, never the caller's.
func TestTrackerPerItem(t *testing.T) {
	outer := liveness.New()
	ctx := liveness.With(t.Context(), outer)
	var mu sync.Mutex
	seen := map[*liveness.Tracker]int{}
	fetch := func(ctx context.Context, item int) (int, error) {
		tr := liveness.From(ctx)
		mu.Lock()
		defer mu.Unlock()
		seen[tr]++
		return item, nil
	}
	if _, err := fanout.Run(ctx, seq(50), fanout.Options{Concurrency: 4}, fetch); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 50 {
		t.Errorf("%d distinct trackers for 50 items, want 50", len(seen))
	}
	if seen[nil] != 0 || seen[outer] != 0 {
		t.Errorf("an item ran without its own tracker: %v", seen)
	}
}

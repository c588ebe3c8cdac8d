package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/retry"
)

// flaky fetches "r<item²>" after a few virtual milliseconds; item i fails
// transiently on its first fails[i] calls. It counts calls and successes.
type flaky struct {
	fails     map[int]int
	calls     counter
	successes counter
}

func (f *flaky) fetch(ctx context.Context, item int) (string, error) {
	n := f.calls.add(item)
	select {
	case <-time.After(time.Duration(item%7+1) * time.Millisecond):
	case <-ctx.Done():
		return "", fmt.Errorf("item %d: %w", item, ctx.Err())
	}
	if n <= f.fails[item] {
		return "", &statusError{Code: 503, Stop: retry.ErrExhausted}
	}
	f.successes.add(item)
	return fmt.Sprintf("r%d", item*item), nil
}

func (f *flaky) checkOnce(t *testing.T, items int) {
	t.Helper()
	for i := range items {
		if n := f.successes.get(i); n != 1 {
			t.Errorf("item %d fetched successfully %d times across the runs, want once", i, n)
		}
	}
}

// An interrupted run, resumed until it completes, returns exactly what an
// uninterrupted run returns, and fetches each item successfully once.
func TestResumeEquivalence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 60
		opt := fanout.Options{Concurrency: 3}
		var clean flaky
		want, err := fanout.Run(t.Context(), seq(n), opt, clean.fetch)
		if err != nil {
			t.Fatal(err)
		}

		f := &flaky{fails: map[int]int{7: 1, 20: 1, 33: 2, 59: 1}}
		got, err := fanout.Run(t.Context(), seq(n), opt, f.fetch)
		interruptions := 0
		for ; err != nil && interruptions < 10; interruptions++ {
			in, ok := err.(*fanout.Interrupted[int, string])
			if !ok {
				t.Fatalf("err = %v, want an interruption", err)
			}
			if got != nil {
				t.Fatalf("results returned with an interruption")
			}
			got, err = in.Resume(t.Context())
		}
		if err != nil {
			t.Fatal(err)
		}
		if interruptions < 2 {
			t.Errorf("%d interruptions, want at least 2 (item 33 fails twice)", interruptions)
		}
		if !slices.Equal(got, want) {
			t.Errorf("resumed result differs from the uninterrupted one:\n got %v\nwant %v", got, want)
		}
		f.checkOnce(t, n)
	})
}

// Two interruptions in a row: each Resume returns a new Interrupted covering
// everything still missing, and leaves the one it was called on unchanged.
func TestResumeTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 12
		opt := fanout.Options{Concurrency: 1}
		f := &flaky{fails: map[int]int{5: 2}}
		_, err := fanout.Run(t.Context(), seq(n), opt, f.fetch)
		in1, ok := err.(*fanout.Interrupted[int, string])
		if !ok || !slices.Equal(in1.Failed, []int{5}) {
			t.Fatalf("first run: err = %v, want item 5 failed", err)
		}
		done1 := len(in1.Completed)
		missing1 := in1.Missing()

		_, err = in1.Resume(t.Context())
		in2, ok := err.(*fanout.Interrupted[int, string])
		if !ok || in2 == in1 || !slices.Equal(in2.Failed, []int{5}) {
			t.Fatalf("first resume: err = %v, want a new interruption with item 5 failed", err)
		}
		if len(in1.Completed) != done1 || !slices.Equal(in1.Missing(), missing1) {
			t.Errorf("Resume changed the interruption it was called on")
		}
		if len(in2.Completed) <= done1 {
			t.Errorf("second interruption holds %d completed, want more than the first's %d", len(in2.Completed), done1)
		}
		for i, r := range in1.Completed {
			if in2.Completed[i] != r {
				t.Errorf("item %d: the second interruption lost the first run's result", i)
			}
		}

		got, err := in2.Resume(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range got {
			if want := fmt.Sprintf("r%d", i*i); r != want {
				t.Errorf("result %d = %q, want %q", i, r, want)
			}
		}
		f.checkOnce(t, n)
	})
}

func TestResumeWithOtherOptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flaky{fails: map[int]int{0: 1}}
		_, err := fanout.Run(t.Context(), seq(8), fanout.Options{}, f.fetch)
		in, ok := err.(*fanout.Interrupted[int, string])
		if !ok {
			t.Fatalf("err = %v, want an interruption", err)
		}
		var hw highWater
		fetch := func(ctx context.Context, item int) (string, error) {
			hw.enter()
			defer hw.leave()
			return f.fetch(ctx, item)
		}
		got, err := in.ResumeWith(t.Context(), fanout.Options{Concurrency: 1}, fetch)
		if err != nil || len(got) != 8 || got[0] != "r0" {
			t.Fatalf("ResumeWith = %v, %v", got, err)
		}
		if hw.most.Load() > 4 {
			t.Errorf("the new options were not used: %d items at once", hw.most.Load())
		}
		f.checkOnce(t, 8)
	})
}

// With Independent, every item runs: the successes come back, the failed
// indexes hold zero values, and the PartialError names each failure.
func TestIndependent(t *testing.T) {
	var calls counter
	fetch := func(ctx context.Context, item int) (int, error) {
		calls.add(item)
		switch item {
		case 2:
			return 0, errFatal
		case 7:
			return 0, errTransient
		}
		return item * 10, nil
	}
	res, err := fanout.Run(t.Context(), seq(10), fanout.Options{Independent: true, Concurrency: 2}, fetch)
	var pe *fanout.PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *PartialError", err)
	}
	if got := pe.Indexes(); !slices.Equal(got, []int{2, 7}) || pe.Total != 10 {
		t.Errorf("failed = %v of %d, want [2 7] of 10", got, pe.Total)
	}
	if !errors.Is(err, errFatal) || !errors.Is(err, retry.ErrExhausted) {
		t.Errorf("err %v should expose both failures", err)
	}
	if want := "fanout: 2 of 10 items failed (first: item 2: " + errFatal.Error() + "; 1 more)"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	want := []int{0, 10, 0, 30, 40, 50, 60, 0, 80, 90}
	if !slices.Equal(res, want) {
		t.Errorf("results = %v, want %v", res, want)
	}
	for i := range 10 {
		if calls.get(i) != 1 {
			t.Errorf("item %d fetched %d times, want once", i, calls.get(i))
		}
	}
}

func TestIndependentCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		fetch := func(ctx context.Context, item int) (int, error) {
			if item == 0 {
				return 0, errFatal
			}
			<-ctx.Done()
			return 0, ctx.Err()
		}
		res, err := fanout.Run(ctx, seq(3), fanout.Options{Independent: true}, fetch)
		if err != context.Canceled || res != nil {
			t.Errorf("Run = %v, %v; want nil, context.Canceled", res, err)
		}
	})
}

// A panic in fetch stops the siblings, waits for them, and is raised again
// in the caller's goroutine with the value and the stack.
func TestPanicReraisedInCaller(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
	}{
		{"string", "boom"},
		{"error", errFatal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var stopped []int
				fetch := func(ctx context.Context, item int) (int, error) {
					if item == 3 {
						time.Sleep(time.Second)
						panic(tc.value)
					}
					<-ctx.Done()
					mu.Lock()
					stopped = append(stopped, item)
					mu.Unlock()
					return 0, ctx.Err()
				}
				v := catch(func() { _, _ = fanout.Run(t.Context(), seq(6), fanout.Options{}, fetch) })
				pe, ok := v.(*fanout.PanicError)
				if !ok {
					t.Fatalf("recovered %#v, want a *PanicError", v)
				}
				if pe.Index != 3 || pe.Value != tc.value {
					t.Errorf("panic of item %d with %v, want item 3 with %v", pe.Index, pe.Value, tc.value)
				}
				if !strings.Contains(string(pe.Stack), "TestPanicReraisedInCaller") {
					t.Errorf("stack does not show where the panic happened:\n%s", pe.Stack)
				}
				if err, isErr := tc.value.(error); isErr && !errors.Is(pe, err) {
					t.Errorf("PanicError does not unwrap to the panic's error")
				}
				slices.Sort(stopped)
				if !slices.Equal(stopped, []int{0, 1, 2, 4, 5}) {
					t.Errorf("siblings stopped before Run panicked: %v, want all five", stopped)
				}
			})
		})
	}
}

func catch(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// A fetch that calls runtime.Goexit (t.FailNow does) ends the caller's
// goroutine the same way, after the siblings have stopped.
func TestGoexitPropagates(t *testing.T) {
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = fanout.Run(context.Background(), seq(3), fanout.Options{}, func(ctx context.Context, item int) (int, error) {
			if item == 1 {
				runtime.Goexit()
			}
			return item, nil
		})
		returned = true
	}()
	<-done
	if returned {
		t.Error("Run returned normally after a fetch called runtime.Goexit")
	}
}

// SubrequestDone counts completed items of the whole list, and a resumed
// run goes on from where the interrupted one stopped.
func TestEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var done []int
		rep := event.ReporterFunc(func(e event.Event) {
			if e.Kind != event.SubrequestDone || e.Total != 10 {
				t.Errorf("event %+v, want sub-request done of 10", e)
			}
			mu.Lock()
			done = append(done, e.Done)
			mu.Unlock()
		})
		f := &flaky{fails: map[int]int{9: 1}}
		_, err := fanout.Run(t.Context(), seq(10), fanout.Options{Reporter: rep, Concurrency: 1}, f.fetch)
		in, ok := err.(*fanout.Interrupted[int, string])
		if !ok {
			t.Fatalf("err = %v, want an interruption", err)
		}
		first, _ := in.Progress()
		if _, err := in.Resume(t.Context()); err != nil {
			t.Fatal(err)
		}
		slices.Sort(done)
		if want := seq(11)[1:]; !slices.Equal(done, want) {
			t.Errorf("done counts %v, want %v (first run completed %d)", done, want, first)
		}
	})
}

package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/retry"
)

// Failure precedence, with exact expectations. Every case runs in virtual
// time; "block" means the fetch waits for its context to end and returns the
// context's error wrapped, as a well-behaved fetch does.
func TestFailurePrecedence(t *testing.T) {
	block := func(ctx context.Context, item int) (string, error) {
		<-ctx.Done()
		return "", fmt.Errorf("item %d: %w", item, ctx.Err())
	}
	after := func(d time.Duration, r string, err error) func(context.Context, int) (string, error) {
		return func(context.Context, int) (string, error) {
			time.Sleep(d) // deliberately deaf to cancellation
			return r, err
		}
	}
	rateLimited := &retry.Error{Method: "GET", URL: "http://api.test/0", Attempts: 1,
		Reason: retry.ErrRetryAfter, Status: 429, RetryAfter: 2 * time.Minute}

	for _, tc := range []struct {
		name     string
		items    int
		opt      fanout.Options
		fetch    map[int]func(context.Context, int) (string, error) // default: ok at once
		cancelAt time.Duration                                      // 0: the caller never cancels
		timeout  time.Duration                                      // 0: no deadline
		check    func(t *testing.T, err error)
	}{{
		name:  "cancel beats fatal and transient",
		items: 3,
		fetch: map[int]func(context.Context, int) (string, error){
			0: after(2*time.Second, "", errTransient),
			1: after(2*time.Second, "", errFatal),
			2: block,
		},
		cancelAt: time.Second,
		check: func(t *testing.T, err error) {
			if err != context.Canceled {
				t.Errorf("err = %#v, want context.Canceled itself", err)
			}
		},
	}, {
		name:  "fatal beats transient, even when it comes later",
		items: 3,
		fetch: map[int]func(context.Context, int) (string, error){
			0: after(time.Second, "", errTransient),
			1: after(2*time.Second, "", errFatal),
			2: block,
		},
		check: func(t *testing.T, err error) {
			var ie *fanout.ItemError
			if !errors.As(err, &ie) || ie.Index != 1 || !errors.Is(err, errFatal) {
				t.Errorf("err = %v, want item 1's fatal error", err)
			}
			if fanout.IsInterrupted(err) {
				t.Errorf("a fatal failure must not be resumable: %v", err)
			}
		},
	}, {
		name:  "first fatal wins among fatal failures",
		items: 3,
		fetch: map[int]func(context.Context, int) (string, error){
			0: after(2*time.Second, "", errors.New("second")),
			1: after(time.Second, "", errFatal),
			2: block,
		},
		check: func(t *testing.T, err error) {
			var ie *fanout.ItemError
			if !errors.As(err, &ie) || ie.Index != 1 || err.Error() != "fanout: item 1: "+errFatal.Error() {
				t.Errorf("err = %v, want item 1's", err)
			}
		},
	}, {
		name:  "transient only: interrupted, siblings stopped, the rest unstarted",
		items: 10,
		opt:   fanout.Options{Concurrency: 1}, // four items run at once
		fetch: map[int]func(context.Context, int) (string, error){
			0: after(time.Second, "", rateLimited),
			2: block, 3: block, 4: block,
		},
		check: func(t *testing.T, err error) {
			in, ok := err.(*fanout.Interrupted[int, string])
			if !ok {
				t.Fatalf("err = %v, want *Interrupted", err)
			}
			if len(in.Completed) != 1 || in.Completed[1] != "r1" {
				t.Errorf("completed = %v, want {1: r1}", in.Completed)
			}
			if !slices.Equal(in.Failed, []int{0}) || len(in.Failures) != 1 || in.Failures[0].Err != rateLimited {
				t.Errorf("failed = %v %v, want item 0's rate limit", in.Failed, in.Failures)
			}
			if want := []int{2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(in.Unfinished, want) || !slices.Equal(in.Missing(), append([]int{0}, want...)) {
				t.Errorf("unfinished = %v, missing = %v", in.Unfinished, in.Missing())
			}
			if in.RetryAfter() != 2*time.Minute {
				t.Errorf("RetryAfter = %v, want 2m", in.RetryAfter())
			}
			if !errors.Is(err, retry.ErrRetryAfter) || !fanout.IsTransient(err) {
				t.Errorf("the interruption should expose its transient cause: %v", err)
			}
			if done, total := in.Progress(); done != 1 || total != 10 {
				t.Errorf("progress = %d/%d, want 1/10", done, total)
			}
		},
	}, {
		name:    "a deadline is the caller's cancellation",
		items:   2,
		timeout: time.Second,
		fetch:   map[int]func(context.Context, int) (string, error){0: block},
		check: func(t *testing.T, err error) {
			if err != context.DeadlineExceeded {
				t.Errorf("err = %#v, want context.DeadlineExceeded itself", err)
			}
		},
	}, {
		name:  "Transient overrides the classification",
		items: 2,
		opt:   fanout.Options{Transient: func(err error) bool { return errors.Is(err, errFatal) }},
		fetch: map[int]func(context.Context, int) (string, error){0: after(0, "", errFatal)},
		check: func(t *testing.T, err error) {
			if !fanout.IsInterrupted(err) {
				t.Errorf("err = %v, want an interruption", err)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.timeout > 0 {
					ctx, cancel = context.WithTimeout(ctx, tc.timeout)
					defer cancel()
				}
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				var calls counter
				fetch := func(ctx context.Context, item int) (string, error) {
					calls.add(item)
					if f := tc.fetch[item]; f != nil {
						return f(ctx, item)
					}
					return fmt.Sprintf("r%d", item), nil
				}
				res, err := fanout.Run(ctx, seq(tc.items), tc.opt, fetch)
				if res != nil {
					t.Errorf("results %v returned with error %v: a failed run must not pass for complete", res, err)
				}
				tc.check(t, err)
				for i := range tc.items {
					if n := calls.get(i); n > 1 {
						t.Errorf("item %d fetched %d times", i, n)
					}
				}
			})
		})
	}
}

// The first failure cancels the siblings still running, with the failure as
// the cause of their context.
func TestFirstFailureCancelsSiblings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		causes := make(chan error, 1)
		fetch := func(ctx context.Context, item int) (int, error) {
			if item == 0 {
				time.Sleep(time.Second)
				return 0, errTransient
			}
			<-ctx.Done()
			if item == 1 {
				causes <- context.Cause(ctx)
			}
			return 0, ctx.Err()
		}
		start := time.Now()
		_, err := fanout.Run(t.Context(), seq(3), fanout.Options{}, fetch)
		if !fanout.IsInterrupted(err) {
			t.Fatalf("err = %v, want an interruption", err)
		}
		if el := time.Since(start); el != time.Second {
			t.Errorf("run took %v, want 1s: siblings must stop at the first failure", el)
		}
		var ie *fanout.ItemError
		if cause := <-causes; !errors.As(cause, &ie) || ie.Index != 0 {
			t.Errorf("sibling's cause = %v, want item 0's failure", cause)
		}
	})
}

func TestCanceledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var calls counter
	_, err := fanout.Run(ctx, seq(5), fanout.Options{}, func(ctx context.Context, item int) (int, error) {
		calls.add(item)
		return item, nil
	})
	if err != ctx.Err() {
		t.Errorf("err = %v, want the context's own error", err)
	}
	for i := range 5 {
		if calls.get(i) != 0 {
			t.Errorf("item %d was fetched after cancellation", i)
		}
	}
}

func TestIsTransient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"exhausted", retry.ErrExhausted, true},
		{"stalled in a retry.Error", &retry.Error{Reason: retry.ErrStalled}, true},
		{"retry-after wrapped", fmt.Errorf("get: %w", &retry.Error{Reason: retry.ErrRetryAfter}), true},
		{"budget", retry.ErrBudget, true},
		{"rate limited", retry.ErrRateLimited, true},
		{"not retryable", &retry.Error{Reason: retry.ErrNotRetryable, Err: errors.New("x509")}, false},
		{"status 503 exhausted", &statusError{Code: 503, Stop: retry.ErrExhausted}, true},
		{"status 404", &statusError{Code: 404}, false},
		{"Retryable true", retryable(true), true},
		{"Retryable false", retryable(false), false},
		{"plain", errFatal, false},
		{"canceled", context.Canceled, false},
		{"deadline", context.DeadlineExceeded, false},
	} {
		if got := fanout.IsTransient(tc.err); got != tc.want {
			t.Errorf("%s: IsTransient(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

type retryable bool

func (r retryable) Error() string   { return fmt.Sprintf("retryable=%v", bool(r)) }
func (r retryable) Retryable() bool { return bool(r) }

func TestInvalidOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opt   fanout.Options
		fetch func(context.Context, int) (int, error)
		field string
	}{
		{"negative concurrency", fanout.Options{Concurrency: -1}, func(context.Context, int) (int, error) { panic("called") }, "Concurrency"},
		{"nil fetch", fanout.Options{}, nil, "fetch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fanout.Run(t.Context(), seq(3), tc.opt, tc.fetch)
			var oe *fanout.OptionsError
			if !errors.As(err, &oe) || oe.Field != tc.field {
				t.Errorf("err = %v, want an OptionsError naming %s", err, tc.field)
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	res, err := fanout.Run(t.Context(), []int{}, fanout.Options{}, func(context.Context, int) (int, error) { panic("called") })
	if err != nil || res == nil || len(res) != 0 {
		t.Errorf("Run over no items = %v, %v; want an empty result", res, err)
	}
}

func TestHugeConcurrency(t *testing.T) {
	res, err := fanout.Run(t.Context(), seq(10), fanout.Options{Concurrency: math.MaxInt}, func(_ context.Context, i int) (int, error) {
		return i, nil
	})
	if err != nil || !slices.Equal(res, seq(10)) {
		t.Errorf("Run = %v, %v; want every item", res, err)
	}
}

// A panic in the Reporter, called on the item's behalf, is raised like one
// in fetch.
func TestReporterPanic(t *testing.T) {
	rep := event.ReporterFunc(func(event.Event) { panic("reporter") })
	v := catch(func() {
		_, _ = fanout.Run(t.Context(), seq(3), fanout.Options{Reporter: rep}, func(_ context.Context, i int) (int, error) { return i, nil })
	})
	if pe, ok := v.(*fanout.PanicError); !ok || pe.Value != "reporter" {
		t.Errorf("recovered %v, want a *PanicError of the reporter's panic", v)
	}
}

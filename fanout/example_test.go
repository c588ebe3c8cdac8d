package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/retry"
)

func ExampleRun() {
	words := []string{"alpha", "beta", "gamma"}
	upper, err := fanout.Run(context.Background(), words, fanout.Options{Concurrency: 2},
		func(ctx context.Context, w string) (string, error) {
			return strings.ToUpper(w), nil
		})
	fmt.Println(upper, err)
	// Output: [ALPHA BETA GAMMA] <nil>
}

// A run stopped by transient failures keeps what it completed; Resume
// fetches the rest only.
func ExampleInterrupted_Resume() {
	var mu sync.Mutex
	calls := map[int]int{}
	fetch := func(ctx context.Context, n int) (int, error) {
		mu.Lock()
		calls[n]++
		first := calls[n] == 1
		mu.Unlock()
		if n == 2 && first {
			return 0, &retry.Error{Method: "GET", URL: "https://api.example.com/2", Attempts: 5, Reason: retry.ErrExhausted, Status: 503}
		}
		return n * n, nil
	}
	ctx := context.Background()
	_, err := fanout.Run(ctx, []int{0, 1, 2, 3}, fanout.Options{}, fetch)
	var in *fanout.Interrupted[int, int]
	if errors.As(err, &in) {
		fmt.Println("failed:", in.Failed)
		squares, err := in.Resume(ctx)
		fmt.Println(squares, err)
		fmt.Println("calls:", calls)
	}
	// Output:
	// failed: [2]
	// [0 1 4 9] <nil>
	// calls: map[0:1 1:1 2:2 3:1]
}

// Code that does not know a run's type parameters handles its interruption
// through the Interruption interface: to report it, or to save it.
func ExampleAsInterruption() {
	_, err := fanout.Run(context.Background(), []string{"a", "b"}, fanout.Options{},
		func(ctx context.Context, s string) (string, error) {
			return "", &retry.Error{Method: "GET", URL: "https://api.example.com/" + s, Attempts: 1,
				Reason: retry.ErrRetryAfter, Status: 429, RetryAfter: 10 * time.Minute}
		})
	if in, ok := fanout.AsInterruption(err); ok {
		fmt.Println("resume after", in.RetryAfter())
	}
	// Output: resume after 10m0s
}

// The command line saves an interruption and resumes it in a later process.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "fanout-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "harvest.state")

	items := []string{"x", "y", "z"}
	var failed atomic.Bool
	fetch := func(ctx context.Context, s string) (string, error) {
		if s == "z" && !failed.Swap(true) {
			return "", &retry.Error{Method: "GET", URL: "https://api.example.com/z", Attempts: 1, Reason: retry.ErrRetryAfter, Status: 429}
		}
		return "<" + s + ">", nil
	}
	opt := fanout.Options{Concurrency: 1}
	_, err = fanout.Run(context.Background(), items, opt, fetch)
	if in, ok := fanout.AsInterruption(err); ok {
		if err := in.Save(path); err != nil {
			fmt.Println(err)
			return
		}
	}

	// Later, in another process, with the same item list:
	in, err := fanout.Load[string, string](path, items)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := in.ResumeWith(context.Background(), opt, fetch)
	fmt.Println(res, err)
	// Output: [<x> <y> <z>] <nil>
}

// With Independent, a failed item does not fail the others.
func ExampleRun_independent() {
	res, err := fanout.Run(context.Background(), []int{1, 0, 4}, fanout.Options{Independent: true},
		func(ctx context.Context, n int) (float64, error) {
			if n == 0 {
				return 0, errors.New("division by zero")
			}
			return 1 / float64(n), nil
		})
	var pe *fanout.PartialError
	if errors.As(err, &pe) {
		fmt.Println(res, "failed:", pe.Indexes())
	}
	// Output: [1 0 0.25] failed: [1]
}

// A fetch that does not send through a retry.Transport takes its slot of the
// fan-out's gate itself.
func ExampleAcquire() {
	sizes, err := fanout.Run(context.Background(), []string{"a.txt", "bb.txt"}, fanout.Options{Concurrency: 4},
		func(ctx context.Context, name string) (int, error) {
			ctx, release, err := fanout.Acquire(ctx)
			if err != nil {
				return 0, err
			}
			defer release()
			return len(name), ctx.Err() // the work, bounded by the gate
		})
	fmt.Println(sizes, err)
	// Output: [5 6] <nil>
}

package simulate_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/steadyhttp/steady/cmd/steady/internal/simulate"
)

// A lone client never contends: under every policy its write succeeds at
// the first call.
func ExampleContention() {
	rows, err := simulate.Contention(simulate.ContentionConfig{Clients: []int{1}, Trials: 10, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Printf("%s: %.0f call\n", r.Policy, r.Calls)
	}
	// Output:
	// no backoff: 1 call
	// exponential: 1 call
	// full jitter: 1 call
	// equal jitter: 1 call
	// decorrelated: 1 call
}

// Without retry, every request reaches the service exactly once.
func ExampleOutage() {
	res, err := simulate.Outage(simulate.OutageConfig{
		Clients: 20, Before: time.Second, Down: 5 * time.Second, After: 5 * time.Second,
		Policies: simulate.OutagePolicies()[:1],
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := res.Runs[0]
	fmt.Printf("%s: amplification %.2fx, recovered after %v, %.0f%% of later requests succeeded\n",
		r.Policy, r.Amplification(), r.Recovery, 100*r.SuccessAfter())
	// Output:
	// no retry: amplification 1.00x, recovered after 0s, 100% of later requests succeeded
}

func ExampleWriteContentionTable() {
	rows := []simulate.ContentionRow{
		{Policy: "exponential", Clients: 100, Trials: 100, Calls: 1858.4, Completion: 61367 * time.Millisecond},
		{Policy: "full jitter", Clients: 100, Trials: 100, Calls: 875.5, Completion: 4842 * time.Millisecond},
	}
	if err := simulate.WriteContentionTable(os.Stdout, rows); err != nil {
		fmt.Println(err)
	}
	// Output:
	// clients  policy            calls  calls/client  completion (s)
	//     100  exponential      1858.4         18.58          61.367
	//     100  full jitter       875.5          8.76           4.842
}

func ExampleWriteOutageTable() {
	res := simulate.OutageResult{Runs: []simulate.OutageRun{{
		Policy: "retry+budget", Requests: 1000, Succeeded: 400, AfterRequests: 300, AfterSucceeded: 300,
		DownFirst: 600, DownAttempts: 660, Recovered: true, Peak: 0.9,
		Stops: simulate.Stops{Budget: 590, Exhausted: 10},
	}}}
	if err := simulate.WriteOutageTable(os.Stdout, res); err != nil {
		fmt.Println(err)
	}
	// Output:
	// policy        amplification  recovery    ok after  ok overall  peak load   exhausted      budget   other
	// retry+budget         1.100x       0 s     100.00%      40.00%      0.90x          10         590       0
}

func ExampleWriteOutageSVG() {
	res, err := simulate.Outage(simulate.OutageConfig{
		Clients: 10, Before: time.Second, Down: 3 * time.Second, After: 3 * time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var svg bytes.Buffer
	if err := simulate.WriteOutageSVG(&svg, res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Count(svg.String(), "<polyline"), "lines, one per policy")
	// Output:
	// 4 lines, one per policy
}

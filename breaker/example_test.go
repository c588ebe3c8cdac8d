package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/steadyhttp/steady/breaker"
)

// The questions a retry loop asks for each attempt: may I send, how long do
// I hold, a slot, and what happened.
func Example() {
	b, _ := breaker.New(breaker.Config{MinRequests: 3})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 4 {
		tk, err := b.Admit(now, "api.example.com", "", false)
		if err != nil {
			fmt.Println("call", i, "fails fast:", err)
			continue
		}
		// hold tk.Hold(), then:
		if err := tk.Acquire(context.Background()); err != nil {
			tk.Done(now, breaker.Abandoned, 0)
			continue
		}
		// send; the answer was a 503, which the caller calls transient:
		tk.Done(now, breaker.Failure, 0)
		fmt.Println("call", i, "sent, failed")
	}
	fmt.Println(b.State("api.example.com", ""))
	// Output:
	// call 0 sent, failed
	// call 1 sent, failed
	// call 2 sent, failed
	// call 3 fails fast: breaker: api.example.com: circuit open; try again in 5s
	// open
}

// A refusal says how long until the host may be tried again, through the
// RetryAfter method fan-outs read.
func ExampleError() {
	b, _ := breaker.New(breaker.Config{MinRequests: 1})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tk, _ := b.Admit(now, "api.example.com", "", false)
	tk.Done(now, breaker.Failure, 30*time.Second) // a 503 with Retry-After: 30

	_, err := b.Admit(now.Add(10*time.Second), "api.example.com", "", false)
	var wait interface{ RetryAfter() time.Duration }
	fmt.Println(errors.Is(err, breaker.ErrOpen), errors.As(err, &wait), wait.RetryAfter())
	// Output:
	// true true 20s
}

// A 429 without quota headers halves the concurrency limit; successes grow
// it back, one step a round trip.
func ExampleBreaker_Limit() {
	b, _ := breaker.New(breaker.Config{MaxConcurrency: 8})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tk, _ := b.Admit(now, "api.example.com", "", false)
	tk.Done(now, breaker.Limited, 0)
	c, _ := b.Limit("api.example.com", "")
	fmt.Println("after a 429:", c)
	for range 5 {
		tk, _ := b.Admit(now, "api.example.com", "", false)
		tk.Done(now, breaker.Success, 0)
	}
	c, _ = b.Limit("api.example.com", "")
	fmt.Println("after 5 successes:", c)
	// Output:
	// after a 429: 4
	// after 5 successes: 5
}

// A host that serves a run of three, then answers bare 429s until its
// window of a second ends: the breaker probes the closed window one
// attempt at a time (a scout, held between probes), learns the window from
// the probe it serves, and then holds the fourth send of a window until
// the next one.
func ExampleBreaker_Quota() {
	b, _ := breaker.New(breaker.Config{})
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now, served := start, 0
	const host = "api.example.com:443"
	// send holds an attempt as the breaker says, then lets the limiter (3
	// a window of a second, opened by the first request) answer it.
	send := func() {
		tk, _ := b.Admit(now, host, "", false)
		now = now.Add(tk.Hold())
		for h := tk.Rehold(now); h > 0; h = tk.Rehold(now) {
			now = now.Add(h)
		}
		_ = tk.Acquire(context.Background())
		if !now.Before(start.Add(time.Second)) {
			start, served = now, 0
		}
		served++
		o := breaker.Limited
		if served <= 3 {
			o = breaker.Success
		}
		tk.Done(now, o, 0)
	}
	for range 4 { // three served, the fourth refused: the window is closed
		send()
	}
	for limit, _ := b.Quota(host, ""); limit == 0; limit, _ = b.Quota(host, "") {
		send() // probes, until one is served
	}
	limit, period := b.Quota(host, "")
	fmt.Println("learned:", limit, "per", period.Round(100*time.Millisecond))
	send()
	send()
	tk, _ := b.Admit(now, host, "", false)
	fmt.Println("the fourth send of the window is held:", tk.Hold() > 0)
	tk.Done(now, breaker.Abandoned, 0)
	// Output:
	// learned: 3 per 1.1s
	// the fourth send of the window is held: true
}

// Validate names each field it refuses.
func ExampleConfig_Validate() {
	err := breaker.Config{MaxRejection: 1, Probes: -1}.Validate()
	var ce *breaker.ConfigError
	fmt.Println(errors.As(err, &ce), ce.Field)
	fmt.Println(err)
	// Output:
	// true Probes
	// breaker: invalid config: Probes is negative (-1)
	// breaker: invalid config: MaxRejection is 1; want 0 (default) or more, below 1 so a host is always re-probed
}

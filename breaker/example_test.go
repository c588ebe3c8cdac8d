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

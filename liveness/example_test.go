package liveness_test

import (
	"context"
	"fmt"

	"github.com/steadyhttp/steady/liveness"
)

// A page walk puts one tracker in its context so the stall budget measures
// silence across all its requests; a waiting period the server asked for is
// credited back.
func ExampleEnsure() {
	ctx, tr := liveness.Ensure(context.Background())
	_ = ctx // pass ctx to every request of the walk
	tr.Mark()
	tr.CountAttempt(false)
	tr.CountAttempt(true)
	fmt.Println(tr.Attempts(), tr.Retries())
	// Output: 2 1
}

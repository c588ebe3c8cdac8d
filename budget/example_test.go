package budget_test

import (
	"fmt"
	"time"

	"github.com/steadyhttp/steady/budget"
)

// A Budget lets a share of the first attempts be re-sent: with a ratio of
// a tenth and no floor, a hundred first attempts earn ten re-sends, and the
// eleventh is refused.
func ExampleBudget() {
	b := &budget.Budget{Ratio: 0.1, MinPerSecond: -1}
	now := time.Unix(0, 0)
	for range 100 {
		b.Deposit()
	}
	allowed := 0
	for b.Withdraw(now) {
		allowed++
	}
	s := b.Stats(now)
	fmt.Println(allowed, s.FirstAttempts, s.Allowed, s.Refused)
	// Output: 10 100 10 1
}

// A nil *Budget allows every re-send: a policy without a budget.
func ExampleBudget_nil() {
	var b *budget.Budget
	b.Deposit()
	fmt.Println(b.Withdraw(time.Now()))
	// Output: true
}

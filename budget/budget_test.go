package budget_test

import (
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/budget"
)

func TestBudgetConcurrentDeposits(t *testing.T) {
	t.Parallel()
	b := &budget.Budget{MinPerSecond: -1}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				b.Deposit()
			}
		})
	}
	wg.Wait()
	if st := b.Stats(time.Unix(0, 0)); st.FirstAttempts != 8000 {
		t.Fatalf("deposits = %d, want 8000", st.FirstAttempts)
	}
}

// BenchmarkBudgetDeposit is the success path under contention.
func BenchmarkBudgetDeposit(b *testing.B) {
	bud := &budget.Budget{}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bud.Deposit()
		}
	})
}

// Over a window, uneven traffic and the floor do not add up: the window
// gains the larger of the two, not the larger of each second's.
func TestBudgetFloorComparedOverTheWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	b := &budget.Budget{MinPerSecond: 2, MaxTokens: 1000}
	b.Withdraw(t0) // starts the window
	allowed := 0
	for sec := 1; sec <= 10; sec++ {
		if sec%2 == 1 {
			for range 40 { // 4 tokens' worth, every other second: 2 a second on average
				b.Deposit()
			}
		}
		for b.Withdraw(t0.Add(time.Duration(sec) * time.Second)) {
			allowed++
		}
	}
	// Ratio: 200 firsts × 0.1 = 20. Floor: 2/s × 10s = 20. Not 30.
	if allowed != 20 {
		t.Fatalf("allowed %d re-sends over the window, want 20", allowed)
	}
}

// A client quiet for an hour has its floor at the first failure.
func TestBudgetQuietClientGetsFloor(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	b := &budget.Budget{}
	b.Deposit()
	b.Withdraw(t0)
	allowed := 0
	for b.Withdraw(t0.Add(time.Hour)) {
		allowed++
	}
	if allowed != 10 {
		t.Fatalf("allowed %d after an hour, want the cap of 10", allowed)
	}
}

func TestBudgetArithmetic(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	type step struct {
		deposits int           // first attempts before the withdrawal
		at       time.Duration // when the withdrawal is asked
		want     bool
	}
	cases := []struct {
		name   string
		budget func() *budget.Budget
		steps  []step
	}{
		{"ratio: 10 firsts buy one re-send", func() *budget.Budget { return &budget.Budget{MinPerSecond: -1} },
			[]step{{10, 0, true}, {0, 0, false}, {9, 0, false}, {1, 0, true}}},
		{"no traffic, no floor, no re-send", func() *budget.Budget { return &budget.Budget{MinPerSecond: -1} },
			[]step{{0, 0, false}, {0, time.Hour, false}}},
		{"floor: 3 a second at low traffic", func() *budget.Budget { return &budget.Budget{} },
			[]step{{1, 0, false}, {0, time.Second, true}, {0, time.Second, true}, {0, time.Second, true}, {0, time.Second, false}}},
		{"floor and ratio do not add up", func() *budget.Budget { return &budget.Budget{MinPerSecond: 2} },
			// 1s: ratio gives 3 (30 firsts), floor gives 2: the larger, 3.
			[]step{{0, 0, false}, {30, time.Second, true}, {0, time.Second, true}, {0, time.Second, true}, {0, time.Second, false}}},
		{"banked tokens are capped", func() *budget.Budget { return &budget.Budget{MinPerSecond: -1, MaxTokens: 2} },
			[]step{{1000, 0, true}, {0, 0, true}, {0, 0, false}}},
		{"custom ratio", func() *budget.Budget { return &budget.Budget{Ratio: 0.5, MinPerSecond: -1} },
			[]step{{2, 0, true}, {1, 0, false}, {1, 0, true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.budget()
			for i, s := range c.steps {
				for range s.deposits {
					b.Deposit()
				}
				if got := b.Withdraw(t0.Add(s.at)); got != s.want {
					t.Fatalf("step %d: Withdraw = %v, want %v (stats %+v)", i, got, s.want, b.Stats(t0.Add(s.at)))
				}
			}
		})
	}
}

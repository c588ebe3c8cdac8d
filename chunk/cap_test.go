package chunk_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/chunk"
)

// valueCount counts the values a URL carries: the list parameters' values and,
// with Repeat, every query parameter.
func valueCount(rawQuery string, repeat bool, sep string) int {
	if repeat {
		return strings.Count(rawQuery, "&") + 1
	}
	n := 0
	for _, p := range strings.Split(rawQuery, "&") {
		if name, v, _ := strings.Cut(p, "="); name == "id" || name == "b" {
			n += strings.Count(v, sep) + 1
		}
	}
	return n
}

// The default caps every URL at 1,000 values, whatever the byte budget
// allows; with Repeat the base query's own parameters count, as a server
// that keeps 1,000 parameters counts them.
func TestPlanCapsValuesPerURL(t *testing.T) {
	t.Parallel()
	base := mustParse(t, "https://h.example/s?fields=all&v=2")
	ids := numbers(2500)
	for _, c := range []struct {
		name string
		opt  chunk.Options
		urls int
		most int
	}{
		{"joined", chunk.Options{MaxURLBytes: 1 << 20}, 3, 1000},
		{"repeated", chunk.Options{MaxURLBytes: 1 << 20, Repeat: true}, 3, 1000},
		{"own cap", chunk.Options{MaxURLBytes: 1 << 20, MaxValues: 100}, 25, 100},
		{"no cap", chunk.Options{MaxURLBytes: 1 << 20, MaxValues: -1}, 1, 2500},
	} {
		t.Run(c.name, func(t *testing.T) {
			urls, err := chunk.PlanWith(base, "id", ids, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(urls) != c.urls {
				t.Errorf("%d URLs, want %d", len(urls), c.urls)
			}
			for _, u := range urls {
				if n := valueCount(u.RawQuery, c.opt.Repeat, ","); n > c.most {
					t.Errorf("a URL carries %d values, want at most %d", n, c.most)
				}
			}
		})
	}
}

// PlanMulti counts the values of every list of a URL together.
func TestPlanMultiCapsValuesPerURL(t *testing.T) {
	t.Parallel()
	base := mustParse(t, "https://h.example/s")
	lists := map[string][]string{"id": numbers(300), "b": numbers(40)}
	urls, err := chunk.PlanMulti(base, lists, chunk.Options{MaxURLBytes: 1 << 20, MaxValues: 50})
	if err != nil {
		t.Fatal(err)
	}
	checkCrossProduct(t, base, lists, urls, 1<<20)
	for _, u := range urls {
		if n := valueCount(u.RawQuery, false, ","); n > 50 {
			t.Errorf("a URL carries %d values, want at most 50", n)
		}
	}
}

// A cap that leaves no room for one value of each list is refused.
func TestPlanCapTooSmall(t *testing.T) {
	t.Parallel()
	base := mustParse(t, "https://h.example/s?a=1&b=2")
	_, err := chunk.PlanWith(base, "id", numbers(3), chunk.Options{Repeat: true, MaxValues: 2})
	if !errors.Is(err, chunk.ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
	_, err = chunk.PlanMulti(mustParse(t, "https://h.example/s"), map[string][]string{"x": numbers(2), "y": numbers(2)}, chunk.Options{MaxValues: 1})
	if !errors.Is(err, chunk.ErrInvalid) {
		t.Errorf("PlanMulti err = %v, want ErrInvalid", err)
	}
}

// Greedy packing under both bounds makes the fewest URLs.
func TestPackIsOptimalWithACap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	base := mustParse(t, "https://h.example/s")
	for trial := range 1000 {
		n := 1 + rng.IntN(12)
		values := make([]string, n)
		for i := range values {
			values[i] = strings.Repeat("v", 1+rng.IntN(6))
		}
		budget, most := 30+rng.IntN(40), 1+rng.IntN(4)
		got, err := chunk.PlanWith(base, "id", values, chunk.Options{MaxURLBytes: budget, MaxValues: most})
		if errors.Is(err, chunk.ErrValueTooLong) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		fits := func(i, j int) bool {
			u, err := chunk.PlanWith(base, "id", values[i:j], chunk.Options{MaxURLBytes: 1 << 30, MaxValues: -1})
			return err == nil && len(u[0].String()) <= budget && j-i <= most
		}
		best := make([]int, n+1)
		for j := 1; j <= n; j++ {
			best[j] = n + 1
			for i := 0; i < j; i++ {
				if best[i]+1 < best[j] && fits(i, j) {
					best[j] = best[i] + 1
				}
			}
		}
		if len(got) != best[n] {
			t.Fatalf("trial %d: greedy made %d URLs, fewest is %d", trial, len(got), best[n])
		}
	}
}

package paginate

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestGuardIsExact: over a long stream of URLs with repeats drawn at
// random, the set says "seen" exactly when a map of the full texts does,
// across every merge of its runs.
func TestGuardIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var g fingerprintSet
	ref := map[string]bool{}
	for i := range 20000 {
		var key string
		if i > 0 && r.IntN(4) == 0 {
			key = fmt.Sprintf("https://api.example.gov/v1/items?cursor=%d", r.IntN(i)) // maybe seen
		} else {
			key = fmt.Sprintf("https://api.example.gov/v1/items?cursor=%d", i+r.IntN(3))
		}
		if got, want := g.add(key), ref[key]; got != want {
			t.Fatalf("step %d, %s: seen = %v, want %v", i, key, got, want)
		}
		ref[key] = true
	}
}

// TestGuardHolds16BytesAPage: the set holds 16 bytes a URL, plus a
// constant, however long the walk, and the keys' texts are not kept.
func TestGuardHolds16BytesAPage(t *testing.T) {
	var g fingerprintSet
	added := 0
	for _, n := range []int{1000, 50000, 200000} {
		for ; added < n; added++ {
			g.add(fmt.Sprintf("https://api.example.gov/v1/items?cursor=%024d&limit=500", added))
		}
		total := 0
		for _, r := range g.runs {
			total += len(r)
		}
		total += len(g.recent)
		if total != n {
			t.Fatalf("holds %d fingerprints after %d URLs", total, n)
		}
		if got, limit := g.size(), 16*n+4096; got > limit {
			t.Errorf("%d URLs: the set holds %d bytes, want at most %d (16 a URL and 4 KiB)", n, got, limit)
		}
	}
}

// BenchmarkLoopGuard compares the fingerprint set with the set of URL texts it
// replaced, over the next links of a 50,000-page cursor walk. B/page is the
// live heap each holds at the end, divided by the pages.
func BenchmarkLoopGuard(b *testing.B) {
	const pages = 50000
	keys := make([]string, pages)
	for i := range keys {
		keys[i] = fmt.Sprintf("https://api.example.gov/v1/items?cursor=%024x&limit=500", uint64(i)*0x9e3779b97f4a7c15)
	}
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	measure := func(b *testing.B, walk func() any) {
		b.ReportAllocs()
		var held uint64
		for b.Loop() {
			before := live()
			set := walk()
			held = live() - before
			runtime.KeepAlive(set)
		}
		b.ReportMetric(float64(held)/pages, "B/page")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pages), "ns/page")
	}
	b.Run("impl=texts", func(b *testing.B) {
		measure(b, func() any {
			seen := map[string]struct{}{}
			for _, k := range keys {
				k = string([]byte(k)) // a walk's keys are fresh strings
				if _, dup := seen[k]; dup {
					b.Fatal("false loop")
				}
				seen[k] = struct{}{}
			}
			return seen
		})
	})
	b.Run("impl=fingerprints", func(b *testing.B) {
		measure(b, func() any {
			g := new(fingerprintSet)
			for _, k := range keys {
				if g.add(k) {
					b.Fatal("false loop")
				}
			}
			return g
		})
	})
}

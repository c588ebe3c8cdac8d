package paginate_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

// linkShapes are Link header values of about n bytes, each built so that a
// next link is found, in the shapes a hostile or broken server sends.
var linkShapes = []struct {
	name  string
	build func(n int) string
}{
	{"many links", func(n int) string {
		unit := `<https://api.example.gov/items?page=7>; rel="prev", `
		return strings.Repeat(unit, n/len(unit)) + `<?page=2>; rel="next"`
	}},
	{"many params", func(n int) string {
		unit := `; title="a page"`
		return `<?page=2>` + strings.Repeat(unit, n/len(unit)) + `; rel="next"`
	}},
	{"one escaped value", func(n int) string {
		return `<?page=2>; rel="next"; title="` + strings.Repeat(`a\"`, n/3) + `"`
	}},
	{"many escaped values", func(n int) string {
		unit := `<a>; t="\"", `
		return `<?page=2>; rel="next", ` + strings.Repeat(unit, n/len(unit))
	}},
	{"unterminated target", func(n int) string {
		return `<?page=2>; rel="next", <` + strings.Repeat("x", n)
	}},
}

// BenchmarkParseLinkHeader parses headers of 64 KB and 1 MB. B/byte is the
// memory allocated per byte of header: a linear parser keeps it the same at
// both sizes.
func BenchmarkParseLinkHeader(b *testing.B) {
	for _, s := range linkShapes {
		for _, n := range []int{64 << 10, 1 << 20} {
			h := s.build(n)
			b.Run(fmt.Sprintf("%s/%dKB", s.name, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(h)))
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					if len(paginate.ParseLinkHeader([]string{h})) == 0 {
						b.Fatal("no link parsed")
					}
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(h)), "B/byte")
			})
		}
	}
}

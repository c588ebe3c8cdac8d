package steady_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/paginate"
)

// Times of the hostile Link headers, which the tests leave to benchmarks:
// linear shapes cost the same per byte at every size, a quadratic one four
// times more per doubling. Compare ns/op across sizes:
//
//	go test -run '^$' -bench HostileLinkHeader -benchmem .

var hostileLinkShapes = []struct {
	name  string
	unit  string
	sizes []int
}{
	{"other links", `<https://elsewhere.example/alt>; rel="alternate", `, []int{64 << 10, 256 << 10, 1 << 20}},
	{"params", `; title="a page"`, []int{64 << 10, 256 << 10, 1 << 20}},
	{"unmatched brackets", `<`, []int{64 << 10, 256 << 10, 1 << 20}},
	{"unterminated quote", `"`, []int{64 << 10, 256 << 10, 1 << 20}},
	// Quadratic today (TestHostileLinkHeaderEscapesAllocateLinearly):
	// 1 MB would take about a minute per op, so it stops at 256 KB.
	{"escaped params", `<a>; t="\"", `, []int{16 << 10, 64 << 10, 256 << 10}},
}

func BenchmarkHostileLinkHeader(b *testing.B) {
	for _, s := range hostileLinkShapes {
		for _, n := range s.sizes {
			h := `<?page=2>; rel="next", ` + strings.Repeat(s.unit, n/len(s.unit))
			b.Run(fmt.Sprintf("%s/%dKB", s.name, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(h)))
				b.ReportAllocs()
				for b.Loop() {
					if len(paginate.ParseLinkHeader([]string{h})) == 0 {
						b.Fatal("no link parsed")
					}
				}
			})
		}
	}
}

// BenchmarkHostileWalkHugeLinkHeader walks two pages over loopback whose
// first carries a 1 MB Link header, through the whole client.
func BenchmarkHostileWalkHugeLinkHeader(b *testing.B) {
	link := strings.Repeat(`<https://elsewhere.example/alt>; rel="alternate", `, (1<<20)/50) + `<?page=2>; rel="next"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "" {
			w.Header().Set("Link", link)
		}
		io.WriteString(w, `[{"id":1}]`)
	}))
	defer srv.Close()
	cl, err := steady.New(steady.Options{BaseURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.CloseIdleConnections()
	b.SetBytes(int64(len(link)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range cl.Pages(context.Background(), "/items", nil, paginate.Options{}) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 2 {
			b.Fatalf("%d pages, want 2", n)
		}
	}
}

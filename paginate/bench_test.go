package paginate_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/internal/handwalk"
	"github.com/steadyhttp/steady/paginate"
)

// benchPages renders n OGC-style pages of per features each, linked by
// links[] with rel "next", once, so the server's cost per page is a write.
func benchPages(n, per int) [][]byte {
	pages := make([][]byte, n+1)
	for p := 1; p <= n; p++ {
		var b strings.Builder
		b.WriteString(`{"type":"FeatureCollection","features":[`)
		for i := range per {
			id := (p-1)*per + i
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"type":"Feature","id":%d,"geometry":{"type":"Point","coordinates":[%d.125,%d.5]},"properties":{"name":"feature %d","value":%d}}`, id, id%180, id%90, id, id*3)
		}
		fmt.Fprintf(&b, `],"numberReturned":%d,"links":[{"rel":"self","type":"application/geo+json","href":"/items?page=%d"}`, per, p)
		if p < n {
			fmt.Fprintf(&b, `,{"rel":"next","type":"application/geo+json","href":"/items?page=%d"}`, p+1)
		}
		b.WriteString(`]}`)
		pages[p] = []byte(b.String())
	}
	return pages
}

func benchServer(pages [][]byte) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("page"))
		if err != nil {
			n = 1
		}
		w.Header().Set("Content-Type", "application/geo+json")
		w.Header().Set("Content-Length", strconv.Itoa(len(pages[n])))
		w.Write(pages[n])
	}))
}

// BenchmarkWalk compares a walk through Pages with the hand loop on the same
// loopback server, and with raw HTTP (GET and discard, no JSON) as the floor
// both stand on. B/page counts every allocation in the process, the
// in-process server's included, divided by the pages walked; comparing 100
// with 1,000 pages shows whether memory per page grows with the walk.
func BenchmarkWalk(b *testing.B) {
	const per = 100
	for _, n := range []int{100, 1000} {
		pages := benchPages(n, per)
		srv := benchServer(pages)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
		start := srv.URL + "/items"
		var bytes int64
		for _, p := range pages {
			bytes += int64(len(p))
		}

		run := func(name string, walk func() (int, int, error)) {
			b.Run(fmt.Sprintf("pages=%d/%s", n, name), func(b *testing.B) {
				b.SetBytes(bytes)
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					got, items, err := walk()
					if err != nil || got != n || (items != n*per && items != 0) {
						b.Fatalf("walked %d pages, %d items: %v", got, items, err)
					}
				}
				runtime.ReadMemStats(&after)
				walked := float64(b.N * n)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/walked, "B/page")
				b.ReportMetric(b.Elapsed().Seconds()*1e6/walked, "µs/page")
			})
		}
		run("paginate", func() (int, int, error) {
			req, _ := http.NewRequest("GET", start, nil)
			got, items := 0, 0
			for p, err := range paginate.Pages(context.Background(), client, req, paginate.Options{Next: paginate.JSONLinks, Items: "features"}) {
				if err != nil {
					return got, items, err
				}
				got++
				items += p.Items.Len()
			}
			return got, items, nil
		})
		// The same walk with nothing named: Auto and FindItems find the
		// strategy and the items on the first page, then walk as above.
		run("paginate-auto", func() (int, int, error) {
			req, _ := http.NewRequest("GET", start, nil)
			got, items := 0, 0
			for p, err := range paginate.Pages(context.Background(), client, req, paginate.Options{Next: paginate.Auto, Items: paginate.FindItems}) {
				if err != nil {
					return got, items, err
				}
				got++
				items += p.Items.Len()
			}
			return got, items, nil
		})
		run("hand", func() (int, int, error) { return handwalk.Walk(client, start) })
		run("raw", func() (int, int, error) {
			for i := 1; i <= n; i++ {
				resp, err := client.Get(start + "?page=" + strconv.Itoa(i))
				if err != nil {
					return i - 1, 0, err
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			return n, 0, nil
		})
		client.CloseIdleConnections()
		srv.Close()
	}
}

package paginate_test

import (
	"bytes"
	"context"
	"net/http"
	"runtime"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

// Pages at the page limit made of the smallest items there are ("1,", two
// bytes an item) cost about their own size, however many items they hold:
// with two of them held at once, as a harvest that writes one while it
// fetches the next does, the live heap stays under 3x the limit, and each
// page allocates less than 3x the limit, growth of its buffer included. A
// slice header per item (24 bytes for every 2) would be 12x. The body is
// read here, not by a retrying transport, whose buffer grows by its own
// rule.
func TestTinyItemsAtThePageLimit(t *testing.T) {
	const limit = 8 << 20
	const pages = 4
	n := (limit - 100) / 2 // just under the limit, as a server filling its pages would send
	body := make([]byte, 0, limit)
	body = append(body, '[')
	for i := range n {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, '1')
	}
	body = append(body, ']')
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Query().Get("page"); p < "4" {
			w.Header().Set("Link", "<?page="+string(p[0]+1)+">; rel=next")
		}
		w.Write(body)
	})
	defer srv.Close()
	client := srv.Client()
	req, _ := http.NewRequest("GET", srv.URL+"/items?page=1", nil)

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var prev *paginate.Page
	got := 0
	for p, err := range paginate.Pages(context.Background(), client, req, paginate.Options{MaxPageBytes: limit}) {
		if err != nil {
			t.Fatal(err)
		}
		got++
		if p.Items.Len() != n {
			t.Fatalf("page %d: %d items, want %d", p.Number, p.Items.Len(), n)
		}
		for i, it := range p.Items.All() {
			if !bytes.Equal(it, []byte("1")) || !p.Items.Compact(i) {
				t.Fatalf("page %d item %d = %q, compact %v", p.Number, i, it, p.Items.Compact(i))
			}
		}
		var now runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&now)
		live := int64(now.HeapAlloc) - int64(before.HeapAlloc)
		held := 1
		if prev != nil {
			held = 2
		}
		t.Logf("page %d: %d pages held, live heap %.2fx the limit", p.Number, held, float64(live)/limit)
		if live > 3*limit {
			t.Fatalf("page %d: with %d pages held the live heap grew by %d bytes, more than 3x the page limit of %d", p.Number, held, live, limit)
		}
		runtime.KeepAlive(prev)
		prev = p
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if got != pages {
		t.Fatalf("%d pages, want %d", got, pages)
	}
	per := float64(after.TotalAlloc-before.TotalAlloc) / pages
	t.Logf("allocated %.2fx the limit a page", per/limit)
	if per > 3*limit {
		t.Fatalf("each page allocated %.0f bytes, more than 3x the page limit of %d", per, limit)
	}
}

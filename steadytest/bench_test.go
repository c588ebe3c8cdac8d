package steadytest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// discardWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the handler alone.
type discardWriter struct {
	h http.Header
	n int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkPage1000Handler: building and writing one page of 1,000 rows.
func BenchmarkPage1000Handler(b *testing.B) {
	h, err := steadytest.NewHandler(steadytest.ServerOptions{Rows: 100_000, LogLimit: -1})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/items?limit=1000&offset=50000", nil)
	w := &discardWriter{h: http.Header{}}
	h.ServeHTTP(w, req)
	b.SetBytes(int64(w.n))
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

// BenchmarkPage1000EncodingJSON is the reference: encoding/json on the same
// rows, what a straightforward server would spend.
func BenchmarkPage1000EncodingJSON(b *testing.B) {
	rows := make([]steadytest.Row, 1000)
	for i := range rows {
		rows[i] = steadytest.RowFor(50_001 + i)
	}
	out, _ := json.Marshal(rows)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(rows); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPage1000HTTP: one page over loopback, read by net/http's client.
func BenchmarkPage1000HTTP(b *testing.B) {
	s := steadytest.NewServer(steadytest.ServerOptions{Rows: 100_000, LogLimit: -1})
	defer s.Close()
	benchGet(b, newClient(b), s.URL+"/items?limit=1000&offset=50000")
}

// BenchmarkStatic1000HTTP serves the same bytes from memory: the floor
// that BenchmarkPage1000HTTP is compared with.
func BenchmarkStatic1000HTTP(b *testing.B) {
	h, _ := steadytest.NewHandler(steadytest.ServerOptions{Rows: 100_000, LogLimit: -1})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/items?limit=1000&offset=50000", nil))
	body := w.Body.Bytes()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer s.Close()
	benchGet(b, newClient(b), s.URL)
}

func benchGet(b *testing.B, c *http.Client, url string) {
	var n int64
	for b.Loop() {
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(resp.Status, err)
		}
	}
	b.SetBytes(n)
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

// BenchmarkPageToFile is the harvest's work on pages once their bodies have
// arrived, with no network: a walk of 10 pages of 1,000 rows like `steady
// serve`'s (the first page's extra checks are a tenth of it), each checked
// and scanned, then written by each output format to io.Discard. An op is
// the 10 pages. Instructions are the figure to compare on a busy machine:
//
//	bench/callgrind.sh ./cmd/steady 200 'PageToFile/format=jsonl$'
func BenchmarkPageToFile(b *testing.B) {
	var body bytes.Buffer
	body.WriteByte('[')
	for i := 1; i <= 1000; i++ {
		if i > 1 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"id":%d,"name":"rusty back\\slash #%d","value":%d.2,"timestamp":"2026-01-01T00:%02d:%02dZ"}`, i, i, i*7, i/60%60, i%60)
	}
	body.WriteByte(']')
	page := body.Bytes()
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{"Content-Length": {strconv.Itoa(len(page))}}
		if n, _ := strconv.Atoi(r.URL.Query().Get("page")); n < 10 {
			h.Set("Link", fmt.Sprintf("<?page=%d>; rel=next", max(n, 1)+1))
		}
		return &http.Response{StatusCode: 200, Request: r, ContentLength: int64(len(page)), Header: h,
			Body: io.NopCloser(bytes.NewReader(page))}, nil
	})}
	for _, format := range []string{fmtJSONL, fmtJSON, fmtCSV, fmtGzip, fmtZstd} {
		b.Run("format="+format, func(b *testing.B) {
			req, _ := http.NewRequest("GET", "http://api.test/items", nil)
			s := newOutput(format, io.Discard, &harvestState{}, "")
			b.SetBytes(10 * int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				for p, err := range paginate.Pages(context.Background(), client, req, paginate.Options{}) {
					if err != nil {
						b.Fatal(err)
					}
					if err := s.writePage(p.Number, p.Items); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.flush(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

package retry_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/retry"
)

// BenchmarkBodyWatch: a successful GET whose small body the caller reads to
// its end and closes, with the body watched (the default: idle read
// timeout, resumable with its ETag) and without (ReadTimeout -1,
// NoResume): the difference is what the watch costs a call. Wall time is
// noisy on a shared machine; count instructions with callgrind:
//
//	go test -c -o /tmp/retry.test ./retry/
//	valgrind --tool=callgrind /tmp/retry.test -test.run '^$' -test.bench 'BodyWatch/watched' -test.benchtime 20000x
func BenchmarkBodyWatch(b *testing.B) {
	for _, c := range []struct {
		name string
		p    retry.Policy
	}{
		{"watched", retry.Policy{}},
		{"unwatched", retry.Policy{ReadTimeout: -1, NoResume: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := http.Header{"Etag": {`"v1"`}, "Content-Type": {"application/json"}}
			inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(`{"id":1}`)),
					ContentLength: 8, Request: r}, nil
			})
			tr := retry.New(inner, c.p)
			req, _ := http.NewRequest(http.MethodGet, "https://api.example.gov/items/1", nil)
			buf := make([]byte, 512)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := resp.Body.Read(buf); err != nil {
						break
					}
				}
				resp.Body.Close()
			}
		})
	}
}

package resume_test

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/steadyhttp/steady/resume"
	"github.com/steadyhttp/steady/retry"
)

const api = "https://api.example.gov/items"

// newTransport is the body layer over a retry transport with policy p over
// next, as the client stacks them. The bodies of these tests are handed
// over to be read: retry reads none inside the attempt unless p says how
// much (PreReadBytes; sdk_test.go tests the default).
func newTransport(next http.RoundTripper, p retry.Policy) *resume.Transport {
	if p.PreReadBytes == 0 {
		p.PreReadBytes = -1
	}
	return resume.New(retry.New(next, p))
}

// roundTripFunc is a fake inner transport.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func respond(r *http.Request, code int, header http.Header, body string) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: header,
		Body: io.NopCloser(strings.NewReader(body)), Request: r, ContentLength: int64(len(body))}
}

func constRand(v float64) func() float64 { return func() float64 { return v } }

func get(ctx context.Context, url string) *http.Request {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		panic(err)
	}
	return r
}

package retry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// roundTripFunc is a fake inner transport.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// probeBody records how a response body was used.
type probeBody struct {
	mu       sync.Mutex
	r        io.Reader
	read     int
	drained  bool
	closed   bool
	closedAt time.Time
}

func newProbe(s string) *probeBody { return &probeBody{r: strings.NewReader(s)} }

func (b *probeBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.r.Read(p)
	b.read += n
	if err == io.EOF {
		b.drained = true
	}
	return n, err
}

func (b *probeBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed, b.closedAt = true, time.Now()
	}
	return nil
}

func (b *probeBody) state() (drained, closed bool, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.drained, b.closed, b.closedAt
}

func respond(r *http.Request, code int, header http.Header, body string) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: header,
		Body: newProbe(body), Request: r, ContentLength: int64(len(body))}
}

// script answers attempt i (0-based) with steps[min(i, len-1)], recording
// when each attempt arrived and what it carried.
type script struct {
	mu       sync.Mutex
	steps    []func(*http.Request) (*http.Response, error)
	times    []time.Time
	reqs     []*http.Request
	bodies   []string
	answered []*http.Response
}

func (s *script) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	i := len(s.times)
	s.times = append(s.times, time.Now())
	s.reqs = append(s.reqs, r)
	var body string
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		body = string(b)
	}
	s.bodies = append(s.bodies, body)
	step := s.steps[min(i, len(s.steps)-1)]
	s.mu.Unlock()
	resp, err := step(r)
	s.mu.Lock()
	s.answered = append(s.answered, resp)
	s.mu.Unlock()
	return resp, err
}

func (s *script) attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.times)
}

func status(code int, kv ...string) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return respond(r, code, h, http.StatusText(code)), nil
	}
}

func fail(err error) func(*http.Request) (*http.Response, error) {
	return func(*http.Request) (*http.Response, error) { return nil, err }
}

// slow makes a step take d of (virtual) time, or end early with the
// request's context.
func slow(d time.Duration, step func(*http.Request) (*http.Response, error)) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return step(r)
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
}

func constRand(v float64) func() float64 { return func() float64 { return v } }

func get(ctx context.Context, url string) *http.Request {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		panic(err)
	}
	return r
}

// spentQuota returns a paced transport over a script that always answers
// 200 with the rate-limit fields kv, after one call whose answer fed them to
// the pacer: the next call is held as those fields say.
func spentQuota(t *testing.T, kv ...string) (*script, *retry.Transport) {
	t.Helper()
	s := &script{steps: []func(*http.Request) (*http.Response, error){status(200, kv...)}}
	tr := retry.New(s, retry.Policy{Pacer: new(ratelimit.Pacer)})
	resp, err := tr.RoundTrip(get(t.Context(), api))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return s, tr
}

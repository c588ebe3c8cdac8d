package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// roundTripFunc is a fake inner transport.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func respond(r *http.Request, code int, body string) *http.Response {
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(body)), Request: r, ContentLength: int64(len(body))}
}

// statusError is the small typed error a fetch makes of a non-2xx response,
// as the facade's status errors will: it wraps the retry stop reason, so the
// fan-out can tell an exhausted 503 from a 404.
type statusError struct {
	Code       int
	Stop       error // the retry outcome's stop reason, nil when accepted
	retryAfter time.Duration
}

func (e *statusError) Error() string {
	if e.Stop != nil {
		return fmt.Sprintf("status %d (%v)", e.Code, e.Stop)
	}
	return fmt.Sprintf("status %d", e.Code)
}
func (e *statusError) Unwrap() error             { return e.Stop }
func (e *statusError) RetryAfter() time.Duration { return e.retryAfter }

// getVia returns a fetch that GETs http://api.test/<item> through rt and
// returns the body, turning a non-2xx answer into a *statusError.
func getVia(rt http.RoundTripper) func(ctx context.Context, item int) (string, error) {
	return func(ctx context.Context, item int) (string, error) {
		ctx, out := retry.WithOutcome(ctx)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/"+strconv.Itoa(item), nil)
		if err != nil {
			return "", err
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode/100 != 2 {
			return "", &statusError{Code: resp.StatusCode, Stop: out.Stop, retryAfter: out.RetryAfter}
		}
		return string(body), nil
	}
}

// itemOf returns the item number a fake request is for.
func itemOf(r *http.Request) int {
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
	if err != nil {
		panic("fake request for " + r.URL.Path)
	}
	return n
}

// highWater counts active work and remembers the most seen at once.
type highWater struct {
	active, most atomic.Int64
}

func (h *highWater) enter() {
	n := h.active.Add(1)
	for {
		m := h.most.Load()
		if n <= m || h.most.CompareAndSwap(m, n) {
			return
		}
	}
}

func (h *highWater) leave() { h.active.Add(-1) }

// counter counts calls per item.
type counter struct {
	mu sync.Mutex
	n  map[int]int
}

func (c *counter) add(i int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[int]int)
	}
	c.n[i]++
	return c.n[i]
}

func (c *counter) get(i int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[i]
}

var (
	errFatal     = errors.New("fatal: bad query")
	errTransient = &retry.Error{Method: "GET", URL: "http://api.test/x", Attempts: 3, Reason: retry.ErrExhausted, Status: 503}
)

func seq(n int) []int {
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	return items
}

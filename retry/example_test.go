package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/retry"
)

// flaky answers 503 twice, then 200.
func flaky() *httptest.Server {
	var n atomic.Int32
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "hello")
	}))
}

func ExampleNew() {
	srv := flaky()
	defer srv.Close()

	client := &http.Client{Transport: retry.New(nil, retry.Policy{InitialBackoff: time.Millisecond})}
	defer client.CloseIdleConnections()
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 hello
}

// A call's attempts and stop reason are recorded even when the transport
// returns the final response rather than an error.
func ExampleWithOutcome() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()

	client := &http.Client{Transport: retry.New(nil, retry.Policy{MaxAttempts: 3, InitialBackoff: time.Millisecond})}
	defer client.CloseIdleConnections()
	ctx, outcome := retry.WithOutcome(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, outcome.Attempts, errors.Is(outcome.Stop, retry.ErrExhausted))
	// Output: 502 3 true
}

// One call can change the policy, here to disable retry, through its
// context.
func ExampleWithMaxAttempts() {
	srv := flaky()
	defer srv.Close()

	client := &http.Client{Transport: retry.New(nil, retry.Policy{})}
	defer client.CloseIdleConnections()
	ctx := retry.WithMaxAttempts(context.Background(), 1)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output: 503
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"120", "42.5", "Sun, 29 Nov 2026 12:01:30 GMT", "soon"} {
		d, ok := retry.ParseRetryAfter(v, now)
		fmt.Println(d, ok)
	}
	// Output:
	// 2m0s true
	// 42.5s true
	// 1m30s true
	// 0s false
}

func ExampleError() {
	_, err := retry.New(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, io.ErrUnexpectedEOF
	}), retry.Policy{MaxAttempts: 2, InitialBackoff: time.Millisecond}).RoundTrip(get(context.Background(), "https://api.example.gov/items?api_key=hunter2"))
	var re *retry.Error
	if errors.As(err, &re) {
		fmt.Println(re.Attempts, errors.Is(err, retry.ErrExhausted), errors.Is(err, io.ErrUnexpectedEOF))
	}
	fmt.Println(err)
	// Output:
	// 2 true true
	// GET https://api.example.gov/items?api_key=REDACTED: attempts exhausted after 2 attempts: unexpected EOF
}

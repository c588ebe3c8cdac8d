package resume_test

import (
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/retry"
)

// The read timeout bounds every body of a transport: among many bodies read
// at once, each read that goes silent fails exactly ReadTimeout after it
// began, and each slow body that keeps sending arrives whole.
func TestReadTimeoutBoundsEveryBodyOnItsOwnClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 24
		var mu sync.Mutex
		next := 0
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			i := next
			next++
			mu.Unlock()
			var body io.ReadCloser = &tickBody{n: 5, every: 4 * time.Second}
			if i%2 == 1 {
				// Silent after a first byte that arrives after i·150ms, so
				// that every stall starts at another time.
				body = &lateStall{first: time.Duration(i) * 150 * time.Millisecond, closed: make(chan struct{})}
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: body, ContentLength: -1, Request: r}, nil
		})
		tr := newTransport(inner, retry.Policy{ReadTimeout: 5 * time.Second})
		type result struct {
			i    int
			got  int
			err  error
			took time.Duration
		}
		results := make(chan result, n)
		for range n {
			resp, err := tr.RoundTrip(get(t.Context(), api))
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			i := next - 1
			mu.Unlock()
			go func() {
				defer resp.Body.Close()
				start := time.Now()
				buf := make([]byte, 64)
				got := 0
				var last time.Time
				for {
					k, err := resp.Body.Read(buf)
					got += k
					if k > 0 {
						last = time.Now()
					}
					if err != nil {
						if err == io.EOF {
							err = nil
						}
						took := time.Since(start)
						if i%2 == 1 {
							took = time.Since(last)
						}
						results <- result{i, got, err, took}
						return
					}
				}
			}()
		}
		for range n {
			r := <-results
			var rt *liveness.ReadTimeoutError
			switch {
			case r.i%2 == 0 && (r.err != nil || r.got != 5):
				t.Errorf("body %d, a byte every 4s: %d bytes, %v; want all 5", r.i, r.got, r.err)
			case r.i%2 == 1 && !errors.As(r.err, &rt):
				t.Errorf("body %d, silent after its first byte: %v; want a ReadTimeoutError", r.i, r.err)
			case r.i%2 == 1 && r.took != 5*time.Second:
				t.Errorf("body %d failed %v after its last byte; want exactly 5s", r.i, r.took)
			}
		}
	})
}

// lateStall delivers one byte after first, then nothing until closed.
type lateStall struct {
	first  time.Duration
	sent   bool
	closed chan struct{}
	once   sync.Once
}

func (b *lateStall) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		time.Sleep(b.first)
		p[0] = 'x'
		return 1, nil
	}
	<-b.closed
	return 0, errors.New("read on a closed body")
}

func (b *lateStall) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// A call whose override shortens ReadTimeout is timed on its own bound
// while a body with the longer one is read: the body layer reads the bound
// of each request's own policy, and neither is late nor early.
func TestReadTimeoutShorterOverride(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: -1,
				Body: &lateStall{closed: make(chan struct{})}}, nil
		})
		tr := newTransport(inner, retry.Policy{ReadTimeout: time.Minute})
		read := func(resp *http.Response, took chan<- time.Duration) {
			defer resp.Body.Close()
			start := time.Now()
			_, err := io.ReadAll(resp.Body)
			var rt *liveness.ReadTimeoutError
			if !errors.As(err, &rt) {
				t.Errorf("read ended with %v; want a ReadTimeoutError", err)
			}
			took <- time.Since(start)
		}
		long, short := make(chan time.Duration, 1), make(chan time.Duration, 1)
		resp, err := tr.RoundTrip(get(t.Context(), api))
		if err != nil {
			t.Fatal(err)
		}
		go read(resp, long)
		time.Sleep(10 * time.Second)
		ctx := retry.WithOverride(t.Context(), func(p *retry.Policy) { p.ReadTimeout = 3 * time.Second })
		resp, err = tr.RoundTrip(get(ctx, api))
		if err != nil {
			t.Fatal(err)
		}
		go read(resp, short)
		if d := <-short; d != 3*time.Second {
			t.Errorf("the 3s override failed after %v", d)
		}
		if d := <-long; d != time.Minute {
			t.Errorf("the 1m default failed after %v", d)
		}
	})
}

// A transport used outside a synctest bubble, then in one bubble after
// another, times each body on the clock of its reader: no timer is left
// from before, on another clock.
func TestReadTimeoutAcrossBubbles(t *testing.T) {
	stalls := true
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		var body io.ReadCloser = &lateStall{closed: make(chan struct{})}
		if !stalls {
			body = io.NopCloser(strings.NewReader("whole"))
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: -1, Body: body}, nil
	})
	tr := newTransport(inner, retry.Policy{ReadTimeout: 5 * time.Second})
	stall := func(t *testing.T) {
		resp, err := tr.RoundTrip(get(t.Context(), api))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		start := time.Now()
		_, err = io.ReadAll(resp.Body)
		var rt *liveness.ReadTimeoutError
		if !errors.As(err, &rt) {
			t.Fatalf("read ended with %v; want a ReadTimeoutError", err)
		}
		if took := time.Since(start); took != 5*time.Second {
			t.Errorf("failed after %v; want 5s", took)
		}
	}
	// Outside any bubble first, a body read whole.
	stalls = false
	resp, err := tr.RoundTrip(get(t.Context(), api))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "whole" {
		t.Fatalf("read %q, %v", b, err)
	}
	resp.Body.Close()
	stalls = true
	for range 2 {
		synctest.Test(t, func(t *testing.T) {
			stall(t)
			stall(t)
		})
	}
}

// A transport dropped after its bodies are read is collected at once, not
// one ReadTimeout later: no timer outlives the read it bounds (a program
// making a client per call would otherwise hold an hour's worth of
// transports and what they reference).
func TestReadTimeoutDoesNotHoldTheTransport(t *testing.T) {
	collected := make(chan struct{})
	func() {
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: 5,
				Body: io.NopCloser(strings.NewReader("whole"))}, nil
		})
		tr := newTransport(inner, retry.Policy{ReadTimeout: time.Hour})
		resp, err := tr.RoundTrip(get(t.Context(), api))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "whole" {
			t.Fatalf("read %q, %v", b, err)
		}
		resp.Body.Close()
		runtime.AddCleanup(tr, func(ch chan struct{}) { close(ch) }, collected)
	}()
	for range 20 {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-time.After(50 * time.Millisecond): // a cleanup runs on its own goroutine after the cycle
		}
	}
	t.Fatal("the transport was not collected after its body was read")
}

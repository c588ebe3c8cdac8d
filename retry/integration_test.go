package retry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/retry"
)

// Real sockets on loopback. Time here is real, so the policies use tiny
// waits and the assertions are about counts and causes, never durations.

func fastPolicy() retry.Policy {
	return retry.Policy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}
}

// resetConn closes the connection with an RST instead of a FIN.
func resetConn(t *testing.T, w http.ResponseWriter) {
	t.Helper()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	conn.(*net.TCPConn).SetLinger(0)
	conn.Close()
}

func TestIntegrationResetThenSuccess(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			resetConn(t, w)
			return
		}
		io.WriteString(w, "fine")
	}))
	defer srv.Close()
	client := &http.Client{Transport: retry.New(nil, fastPolicy())}
	defer client.CloseIdleConnections()
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "fine" || n.Load() != 3 {
		t.Fatalf("body %q after %d attempts; want success on the third", body, n.Load())
	}
}

func TestIntegrationTruncatedBodyReadInAttempt(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		if n.Add(1) == 1 {
			io.WriteString(w, `{"partial":`)
			return // the handler ends short of Content-Length: the client sees an unexpected EOF
		}
		io.WriteString(w, strings.Repeat("x", 100))
	}))
	defer srv.Close()
	tr := retry.New(nil, fastPolicy())
	defer tr.CloseIdleConnections()
	ctx := liveness.WithBodyInAttempt(context.Background(), 1<<20)
	resp, err := tr.RoundTrip(get(ctx, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if len(body) != 100 || n.Load() != 2 {
		t.Fatalf("got %d bytes after %d attempts; want the whole body on the second", len(body), n.Load())
	}
}

func TestIntegrationRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	tr := retry.New(nil, fastPolicy())
	defer tr.CloseIdleConnections()
	ctx, out := retry.WithOutcome(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/x", strings.NewReader("body"))
	_, err = tr.RoundTrip(req)
	// A POST whose connection was refused provably never left: re-sent.
	if !errors.Is(err, retry.ErrExhausted) || !errors.Is(err, syscall.ECONNREFUSED) || out.Attempts != 3 {
		t.Fatalf("err = %v after %d attempts; want ErrExhausted wrapping ECONNREFUSED after 3", err, out.Attempts)
	}
}

func TestIntegrationUntrustedCertificate(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer srv.Close()
	tr := retry.New(nil, fastPolicy()) // the default roots do not trust the test certificate
	defer tr.CloseIdleConnections()
	ctx, out := retry.WithOutcome(context.Background())
	_, err := tr.RoundTrip(get(ctx, srv.URL))
	if !errors.Is(err, retry.ErrNotRetryable) || out.Attempts != 1 {
		t.Fatalf("err = %v after %d attempts; want ErrNotRetryable after one", err, out.Attempts)
	}
}

// A server that never answers: each attempt ends at the response-header
// timeout, and the stall budget (a little over one timeout) allows the first
// re-send but not a third attempt.
func TestIntegrationNeverAnswers(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	inner := &http.Transport{ResponseHeaderTimeout: 50 * time.Millisecond}
	defer inner.CloseIdleConnections()
	p := fastPolicy()
	p.MaxAttempts = 5
	p.StallTimeout = 75 * time.Millisecond
	_, err := retry.New(inner, p).RoundTrip(get(context.Background(), srv.URL))
	if !errors.Is(err, retry.ErrStalled) {
		t.Fatalf("err = %v, want ErrStalled", err)
	}
	var re *retry.Error
	if !errors.As(err, &re) || re.Attempts != 2 {
		t.Fatalf("err = %v, want 2 attempts", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("cause %v is not the timeout", err)
	}
}

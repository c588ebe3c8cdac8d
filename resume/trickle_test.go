package resume_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/resume"
	"github.com/steadyhttp/steady/retry"
)

// trickle serves size bytes with a strong ETag and real Range support,
// and hangs up every answer after perConn new bytes (the seam a
// continuation asks again comes on top), until it has answered giveUp
// requests; then it sends the rest whole, so an unbounded client ends too.
func trickle(size, perConn int, giveUp int64, served *atomic.Int64) *httptest.Server {
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		w.Header().Set("Etag", `"trickle"`)
		if n > giveUp {
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
			return
		}
		from, rg := 0, r.Header.Get("Range")
		if rg != "" {
			from, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, len(data)-1, len(data)))
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)-from))
		status := http.StatusOK
		send := perConn
		if rg != "" {
			status, send = http.StatusPartialContent, 16+perConn // the seam, then the new bytes
		}
		w.WriteHeader(status)
		w.Write(data[from:min(from+send, len(data))])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
}

// A server that sends one new byte per connection does not get one request
// per byte: a break after less than the progress a continuation must make
// spends the policy's attempts, and the read ends in a typed error after
// MaxAttempts requests (ADR 290).
func TestTrickleEndsAfterTheAttempts(t *testing.T) {
	var served atomic.Int64
	srv := trickle(64<<10, 1, 500, &served)
	defer srv.Close()
	p := retry.Policy{MaxAttempts: 4, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	tr := resume.New(retry.New(nil, p))
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var re *retry.Error
	if !errors.As(err, &re) || !errors.Is(err, retry.ErrExhausted) {
		t.Errorf("read error %v; want a *retry.Error for exhausted attempts", err)
	}
	if n := served.Load(); n > int64(p.MaxAttempts) {
		t.Errorf("%d requests for a server sending a byte per connection; want at most %d", n, p.MaxAttempts)
	}
}

// A server that sends real progress on every connection is followed to
// the end, however many breaks that takes.
func TestBreaksAfterProgressAreFollowed(t *testing.T) {
	var served atomic.Int64
	srv := trickle(256<<10, 32<<10, 100, &served)
	defer srv.Close()
	p := retry.Policy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	tr := resume.New(retry.New(nil, p))
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != 256<<10 {
		t.Errorf("read %d bytes, %v; want the whole body", n, err)
	}
	if got := served.Load(); got != 8 {
		t.Errorf("%d requests; want 8 pieces of 32 KiB", got)
	}
}

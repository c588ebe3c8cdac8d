package steady_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/retry"
)

// A body that stops after its headers and a first chunk fails the caller's
// read after ReadTimeout with a typed timeout, through Do and through
// HTTP(), on a real socket: it no longer blocks until the process is
// killed.
func TestStreamedBodyStallFailsTheReadOnARealSocket(t *testing.T) {
	release := make(chan struct{})
	srv := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write(bytes.Repeat([]byte("a"), 1000))
		w.(http.Flusher).Flush()
		select { // silence, until the client hangs up or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	p := fast()
	p.ReadTimeout = 100 * time.Millisecond
	cl := newClient(t, steady.Options{Policy: p})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a hang fails, not blocks, the test
	defer cancel()
	for name, send := range map[string]func(*http.Request) (*http.Response, error){
		"Do": cl.Do, "HTTP": cl.HTTP().Do,
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/stall", nil)
		resp, err := send(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		var rt *retry.ReadTimeoutError
		if !errors.As(err, &rt) {
			t.Errorf("%s: read ended with %v after %d bytes; want a ReadTimeoutError", name, err, len(got))
		}
		if len(got) != 1000 {
			t.Errorf("%s: read %d bytes; want the 1000 sent", name, len(got))
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the reads blocked until the test's own deadline")
	}
}

// cuttingServer serves data with http.ServeContent (real Range, If-Range
// and ETag handling) and breaks every answer's connection after cut bytes
// of body. With gzip set it compresses answers to clients that accept gzip.
func cuttingServer(t *testing.T, data []byte, cut int, gz bool) (*hostileServer, *atomic.Int64) {
	var ranges atomic.Int64
	srv := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" {
			ranges.Add(1)
		}
		w.Header().Set("Etag", `"blob-1"`)
		cw := &cutWriter{ResponseWriter: w, left: cut}
		if gz && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(cw)
			zw.Write(data)
			zw.Close()
			return
		}
		http.ServeContent(cw, r, "blob", time.Time{}, bytes.NewReader(data))
	})
	return srv, &ranges
}

// cutWriter passes left bytes of body and then aborts the connection.
type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if len(p) > c.left {
		c.ResponseWriter.Write(p[:c.left])
		c.ResponseWriter.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // net/http closes the connection mid-body
	}
	c.left -= len(p)
	return c.ResponseWriter.Write(p)
}

// blob is n bytes that gzip cannot shrink much, so a compressed answer is
// cut as often as a plain one.
func blob(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, uint64(n)))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Through the client's HTTP(), on real sockets: a body broken every 100 KB
// arrives whole, one request per break.
func TestResumeThroughTheClient(t *testing.T) {
	data := blob(1 << 20)
	srv, ranges := cuttingServer(t, data, 100_000, false)
	cl := newClient(t, steady.Options{Policy: fast()})
	ctx, out := retry.WithOutcome(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/blob", nil)
	resp, err := cl.HTTP().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, %v; want the %d sent, identical", len(got), err, len(data))
	}
	if n, want := ranges.Load(), int64(len(data)/100_000); n != want {
		t.Errorf("%d Range requests; want %d, one per break", n, want)
	}
	if out.Resumes != int(ranges.Load()) {
		t.Errorf("outcome says %d resumes; the server saw %d", out.Resumes, ranges.Load())
	}
}

// A body net/http decompressed cannot be resumed, since a range counts
// encoded bytes: the read fails with a ResumeError that says so, holding
// only whole bytes. Asking for identity encoding makes the same download
// resumable.
func TestResumeCompressedBody(t *testing.T) {
	data := blob(1 << 20)
	srv, ranges := cuttingServer(t, data, 100_000, true)
	cl := newClient(t, steady.Options{Policy: fast()})

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/blob", nil)
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Uncompressed {
		t.Fatal("the test server's gzip was not decompressed by net/http; the case is not exercised")
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	var re *retry.ResumeError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "decompressed") {
		t.Fatalf("read ended with %v; want a ResumeError naming the decompression", err)
	}
	if !bytes.Equal(got, data[:len(got)]) || ranges.Load() != 0 {
		t.Errorf("got %d bytes (a prefix: %v), %d Range requests; want a true prefix and none",
			len(got), bytes.Equal(got, data[:len(got)]), ranges.Load())
	}

	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/blob", nil)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err = cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("identity: read %d bytes, %v; want all %d", len(got), err, len(data))
	}
	if n := ranges.Load(); n != int64(len(data)/100_000) {
		t.Errorf("identity: %d Range requests, want %d", n, len(data)/100_000)
	}
}

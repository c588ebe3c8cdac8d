package steady_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/resume"
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
	p.PreReadBytes = -1 // the body is handed over, and its read stalls
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
		var rt *liveness.ReadTimeoutError
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

// A JSON body read inside the attempt (GetJSON) that goes silent mid-way
// is cut at ReadTimeout by closing it under the read, on a real
// socket, and re-sent: the second answer, whole, is the one decoded.
func TestGetJSONStallIsCutAndResentOnARealSocket(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int64
	srv := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 1 {
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, `{"items":[1,2,`)
			w.(http.Flusher).Flush()
			select { // silence, until the client hangs up or the test ends
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		io.WriteString(w, `{"items":[1,2,3]}`)
	})
	t.Cleanup(func() { close(release) })
	p := fast()
	p.ReadTimeout = 100 * time.Millisecond
	var mu sync.Mutex
	var classes []string
	p.Reporter = event.ReporterFunc(func(e event.Event) {
		if e.Kind == event.RetryScheduled {
			mu.Lock()
			classes = append(classes, e.ErrClass+": "+e.Err)
			mu.Unlock()
		}
	})
	cl := newClient(t, steady.Options{Policy: p})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a hang fails, not blocks, the test
	defer cancel()
	var v struct{ Items []int }
	ctx, out := retry.WithOutcome(ctx)
	if err := cl.GetJSON(ctx, srv.URL+"/stall", nil, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Items) != 3 || out.Attempts != 2 || n.Load() != 2 {
		t.Errorf("decoded %v after %d attempts (%d requests); want [1 2 3] after 2", v.Items, out.Attempts, n.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(classes) != 1 || !strings.Contains(classes[0], "read timeout") {
		t.Errorf("re-sent after %q; want once, after the read timeout", classes)
	}
	if ctx.Err() != nil {
		t.Fatal("the read blocked until the test's own deadline")
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

// Through Do and HTTP(), on real sockets: a body broken every 100 KB
// arrives whole, one request per break, counted in the caller's Outcome.
func TestResumeThroughTheClient(t *testing.T) {
	data := blob(1 << 20)
	srv, ranges := cuttingServer(t, data, 100_000, false)
	cl := newClient(t, steady.Options{Policy: fast()})
	for name, send := range map[string]func(*http.Request) (*http.Response, error){
		"HTTP": cl.HTTP().Do, "Do": cl.Do,
	} {
		ranges.Store(0)
		ctx, out := retry.WithOutcome(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/blob", nil)
		resp, err := send(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: read %d bytes, %v; want the %d sent, identical", name, len(got), err, len(data))
		}
		if n, want := ranges.Load(), int64(len(data)/100_000); n != want {
			t.Errorf("%s: %d Range requests; want %d, one per break", name, n, want)
		}
		if out.Resumes != int(ranges.Load()) {
			t.Errorf("%s: the caller's outcome says %d resumes; the server saw %d", name, out.Resumes, ranges.Load())
		}
	}
}

// A body net/http decompressed cannot be resumed, since a range counts
// encoded bytes: the read fails with a resume.Error that says so, holding
// only whole bytes. Asking for identity encoding makes the same download
// resumable.
func TestResumeCompressedBody(t *testing.T) {
	data := blob(1 << 20)
	srv, ranges := cuttingServer(t, data, 100_000, true)
	p := fast()
	p.PreReadBytes = -1 // a body of unknown length within it would be re-sent whole
	cl := newClient(t, steady.Options{Policy: p})

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
	var re *resume.Error
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "decompressed") {
		t.Fatalf("read ended with %v; want a resume.Error naming the decompression", err)
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

// Lying servers on real sockets, through the client: each answers the
// first request honestly and cuts it; the continuation is a lie. The caller
// never holds a byte of the second answer.
func TestResumeNeverSplicesALiar(t *testing.T) {
	data := blob(200_000)
	other := blob(200_001)[1:] // same length, other bytes
	const cut = 80_000
	cases := []struct {
		name string
		etag string
		lie  func(w http.ResponseWriter, r *http.Request)
	}{
		{"changed: new ETag and other bytes", `"v1"`, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Etag", `"v2"`)
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(other)) // If-Range fails: 200 whole
		}},
		{"206 of other bytes under a new ETag", `"v1"`, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Etag", `"v2"`)
			r.Header.Del("If-Range") // honours Range whatever the validator
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(other))
		}},
		{"ignores Range: 200 whole", `"v1"`, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Etag", `"v1"`)
			w.Write(data)
		}},
		{"weak ETag only", `W/"v1"`, func(w http.ResponseWriter, r *http.Request) {
			t.Error("a continuation was sent for a weak ETag")
		}},
		{"lying Content-Range", `"v1"`, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Etag", `"v1"`)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", cut, len(data)-1, len(data)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[cut-1000:]) // claims byte 80000, sends from 79000
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) > 1 {
					tc.lie(w, r)
					return
				}
				w.Header().Set("Etag", tc.etag)
				http.ServeContent(&cutWriter{ResponseWriter: w, left: cut}, r, "", time.Time{}, bytes.NewReader(data))
			})
			p := fast()
			p.PreReadBytes = -1 // the refusals of the body layer, not a re-send of a small body
			cl := newClient(t, steady.Options{Policy: p})
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/f", nil)
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !errors.Is(err, resume.ErrRefused) {
				t.Fatalf("read ended with %v; want resume.ErrRefused", err)
			}
			if !bytes.Equal(got, data[:cut]) {
				t.Fatalf("the caller holds %d bytes, not exactly the first answer's %d: spliced", len(got), cut)
			}
		})
	}
}

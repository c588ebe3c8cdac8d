package resume_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/resume"
	"github.com/steadyhttp/steady/retry"
)

// resettingServer reads every request's body whole and records it, then
// breaks the first connection without an answer, as a server that resets
// an upload does, and answers 200 afterwards.
func resettingServer(t *testing.T) (*httptest.Server, func() [][]byte) {
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		first := len(bodies) == 1
		mu.Unlock()
		if first {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return bodies
	}
}

// client is the body layer over retry, with a fast backoff.
func replayClient(t *testing.T) *http.Client {
	tr := resume.New(retry.New(nil, retry.Policy{InitialBackoff: time.Millisecond}))
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// readSeekCloser is a seekable body that is not an *os.File, as an SDK
// hands one over: an in-memory reader with a Close.
type readSeekCloser struct{ *bytes.Reader }

func (readSeekCloser) Close() error { return nil }

// streamed hides every method of r but Read and Close: a body that cannot
// be rewound.
type streamed struct{ r io.Reader }

func (s *streamed) Read(p []byte) (int, error) { return s.r.Read(p) }
func (s *streamed) Close() error               { return nil }

func put(t *testing.T, url string, body io.ReadCloser, n int64) *http.Request {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Body, req.ContentLength = body, n // as an SDK builds it: no GetBody
	return req
}

// A PutObject-like PUT whose body has no GetBody goes through a server that
// resets the first connection: it is re-sent, and the same bytes arrive.
// A seekable body is rewound (at any length); a stream is replayed from
// what was kept of it, within the bound.
func TestRequestBodyReplayedThroughAReset(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB: past the bound of what is kept
	small := data[:100<<10]
	file := filepath.Join(t.TempDir(), "object")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		want []byte
		body func() io.ReadCloser
	}{
		{"file", data, func() io.ReadCloser {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}},
		{"bytes.Reader", data, func() io.ReadCloser { return readSeekCloser{bytes.NewReader(data)} }},
		{"stream within the bound", small, func() io.ReadCloser { return &streamed{bytes.NewReader(small)} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, bodies := resettingServer(t)
			req := put(t, srv.URL+"/bucket/key", c.body(), int64(len(c.want)))
			body := req.Body
			resp, err := replayClient(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := bodies()
			if len(got) != 2 || !bytes.Equal(got[0], c.want) || !bytes.Equal(got[1], c.want) {
				t.Fatalf("%d requests; want 2, each with the whole body", len(got))
			}
			if req.GetBody != nil || req.Body != body {
				t.Error("the caller's request was changed")
			}
		})
	}
}

// A stream past the bound is sent once, and the error says it was
// committed and names the bound.
func TestRequestBodyPastTheBoundIsSentOnce(t *testing.T) {
	srv, bodies := resettingServer(t)
	data := bytes.Repeat([]byte("x"), 2<<20)
	req := put(t, srv.URL+"/bucket/key", &streamed{bytes.NewReader(data)}, int64(len(data)))
	resp, err := replayClient(t).Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("a re-send of a committed body succeeded")
	}
	if !errors.Is(err, resume.ErrCommitted) || !strings.Contains(err.Error(), "1048576 bytes per request") {
		t.Errorf("err = %v; want ErrCommitted naming the bound of 1048576 bytes", err)
	}
	if n := len(bodies()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// The transport keeps at most 16 MiB of request bodies at once: with 16
// bodies of 1 MiB kept by calls in flight, a 17th is committed, and the
// error says the transport's bound.
func TestRequestBodyReplayBoundPerTransport(t *testing.T) {
	const mib = 1 << 20
	var held sync.WaitGroup
	held.Add(16)
	release := make(chan struct{})
	var attempts sync.Map // per path: attempts so far
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		n, _ := attempts.LoadOrStore(r.URL.Path, new(atomic.Int32))
		if n.(*atomic.Int32).Add(1) > 1 {
			return respond(r, 200, nil, ""), nil
		}
		if r.URL.Path != "/last" {
			held.Done()
			<-release
		}
		return nil, io.ErrUnexpectedEOF
	})
	tr := newTransport(inner, retry.Policy{InitialBackoff: time.Millisecond, Rand: constRand(0)})
	send := func(path string) error {
		req := put(t, "https://s3.example.gov"+path, &streamed{bytes.NewReader(make([]byte, mib))}, mib)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range 16 {
		wg.Go(func() { errs[i] = send("/" + string(rune('a'+i))) })
	}
	held.Wait()
	err := send("/last")
	close(release)
	wg.Wait()
	if !errors.Is(err, resume.ErrCommitted) || !strings.Contains(err.Error(), "16777216 bytes") {
		t.Errorf("17th call: %v; want ErrCommitted naming the transport's bound", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
}

// zeros is an endless stream of zero bytes that allocates nothing.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// A 1 GiB streamed PUT through the replay buffer costs a bounded amount of
// memory: what is kept stops at the bound, then the body streams.
func TestRequestBodyReplayMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 1 GiB")
	}
	const size = 1 << 30
	var sent int64
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return respond(r, 200, nil, ""), nil
	})
	tr := newTransport(inner, retry.Policy{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req := put(t, "https://s3.example.gov/bucket/big", &streamed{io.LimitReader(zeros{}, size)}, size)
	req = req.WithContext(context.Background())
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	runtime.ReadMemStats(&after)
	if sent != size {
		t.Fatalf("%d bytes sent, want %d", sent, size)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("a 1 GiB PUT allocated %d bytes, want at most 8 MiB", grew)
	}
}

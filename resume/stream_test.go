package resume_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/resume"
	"github.com/steadyhttp/steady/retry"
)

// fileServer is an in-memory origin with real Range semantics for a
// body layer to talk to in a synctest bubble. Each answer's body
// breaks (or stalls) after cut bytes; answer lets a test make the server
// lie.
type fileServer struct {
	mu     sync.Mutex
	data   []byte
	header http.Header // validators and the like, sent with every answer
	cut    int64       // bytes each answer delivers before it breaks; 0: never
	stall  bool        // a break is silence until closed, not an error
	answer func(n int, r *http.Request, resp *http.Response) *http.Response
	reqs   []*http.Request
	bodies []*cutBody
}

func newFileServer(size int, kv ...string) *fileServer {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*131 + i/251)
	}
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return &fileServer{data: data, header: h}
}

func (s *fileServer) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
	resp := &http.Response{StatusCode: 200, Header: s.header.Clone(), Request: r}
	from, to := int64(0), int64(len(s.data))
	if rg := r.Header.Get("Range"); rg != "" {
		k, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("test server: bad Range %q", rg)
		}
		ir := r.Header.Get("If-Range")
		if ir == s.header.Get("Etag") || ir == s.header.Get("Last-Modified") {
			if k >= to {
				resp.StatusCode = 416
				resp.Header.Set("Content-Range", "bytes */"+strconv.Itoa(len(s.data)))
				resp.Body, resp.ContentLength = http.NoBody, 0
				return s.finish(n, r, resp), nil
			}
			resp.StatusCode = 206
			from = k
			resp.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", k, to-1, to))
		}
	}
	resp.ContentLength = to - from
	b := &cutBody{data: s.data[from:to], cut: s.cut, stall: s.stall, closed: make(chan struct{})}
	resp.Body = b
	s.mu.Lock()
	s.bodies = append(s.bodies, b)
	s.mu.Unlock()
	return s.finish(n, r, resp), nil
}

func (s *fileServer) finish(n int, r *http.Request, resp *http.Response) *http.Response {
	if s.answer != nil {
		return s.answer(n, r, resp)
	}
	return resp
}

func (s *fileServer) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// cutBody delivers data in 1000-byte reads and breaks after cut bytes:
// an unexpected EOF, or silence until closed when stall is set.
type cutBody struct {
	mu      sync.Mutex
	data    []byte
	cut     int64
	stall   bool
	sent    int64
	closed  chan struct{}
	closeMu sync.Once
}

func (b *cutBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if len(b.data) == 0 {
		b.mu.Unlock()
		return 0, io.EOF
	}
	if b.cut > 0 && b.sent >= b.cut {
		b.mu.Unlock()
		if b.stall {
			<-b.closed
			return 0, errors.New("read on a closed body")
		}
		return 0, io.ErrUnexpectedEOF
	}
	n := min(len(p), 1000, len(b.data))
	if b.cut > 0 {
		n = int(min(int64(n), b.cut-b.sent))
	}
	copy(p, b.data[:n])
	b.data = b.data[n:]
	b.sent += int64(n)
	b.mu.Unlock()
	return n, nil
}

func (b *cutBody) Close() error {
	b.closeMu.Do(func() { close(b.closed) })
	return nil
}

// events collects what a transport reports.
type events struct {
	mu sync.Mutex
	es []event.Event
}

func (e *events) Report(ev event.Event) {
	e.mu.Lock()
	e.es = append(e.es, ev)
	e.mu.Unlock()
}

func (e *events) reasons(k event.Kind) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.es {
		if ev.Kind == k {
			out = append(out, ev.Reason)
		}
	}
	return out
}

func sum(b []byte) [32]byte { return sha256.Sum256(b) }

// readAll reads resp's body to its end, returning what arrived and how the
// read ended.
func readAll(t *testing.T, tr http.RoundTripper, ctx context.Context) ([]byte, error) {
	t.Helper()
	resp, err := tr.RoundTrip(get(ctx, api))
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// A body broken every 64 KB arrives whole and byte-identical: each break is
// continued with Range from the byte reached and If-Range with the strong
// ETag, and the outcome counts the continuations.
func TestResumeContinuesABrokenBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(300_000, "Etag", `"v1"`)
		s.cut = 64_000
		ev := &events{}
		tr := newTransport(s, retry.Policy{Rand: constRand(0.5), Reporter: ev})
		ctx, out := retry.WithOutcome(t.Context())
		got, err := readAll(t, tr, ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if sum(got) != sum(s.data) {
			t.Fatalf("got %d bytes, not the %d sent byte for byte", len(got), len(s.data))
		}
		reqs := s.requests()
		if len(reqs) != 5 {
			t.Fatalf("%d requests, want 5 (the first and a continuation per 64 KB)", len(reqs))
		}
		// Each continuation asks again for the 16 bytes before the break,
		// the seam it checks, so each answer brings 64000-16 new bytes.
		var want []string
		for i, r := range reqs[1:] {
			k := 64_000 + i*(64_000-16)
			want = append(want, "resume at byte "+strconv.Itoa(k))
			want := "bytes=" + strconv.Itoa(k-16) + "-"
			if r.Header.Get("Range") != want || r.Header.Get("If-Range") != `"v1"` {
				t.Errorf("continuation %d: Range %q If-Range %q; want %q and the ETag", i+1,
					r.Header.Get("Range"), r.Header.Get("If-Range"), want)
			}
			if r.Header.Get("Accept-Encoding") != "identity" {
				t.Errorf("continuation %d offered encodings %q; want identity, like the first answer", i+1, r.Header.Get("Accept-Encoding"))
			}
		}
		if out.Resumes != 4 || out.Attempts != 5 || out.Stop != nil {
			t.Errorf("outcome %+v; want 4 resumes, 5 attempts, no stop", *out)
		}
		if got := ev.reasons(event.RetryScheduled); !equal(got, want) {
			t.Errorf("retry reasons %q; want %q", got, want)
		}
		ev.mu.Lock()
		for _, e := range ev.es {
			if e.Kind == event.RetryScheduled && (e.Attempt != 1 || e.Bytes == 0) {
				t.Errorf("resume event %+v: want attempt 1 (each break follows progress) and the byte offset", e)
			}
		}
		ev.mu.Unlock()
		if got := ev.reasons(event.RequestStarted); len(got) != 1 {
			t.Errorf("%d RequestStarted events; a continuation is not a new request", len(got))
		}
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Last-Modified stands in for a missing ETag, sent as If-Range.
func TestResumeWithLastModified(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lm := "Mon, 02 Jan 2006 15:04:05 GMT"
		s := newFileServer(50_000, "Last-Modified", lm, "Date", "Tue, 03 Jan 2006 15:04:05 GMT")
		s.cut = 30_000
		tr := newTransport(s, retry.Policy{Rand: constRand(0.5)})
		got, err := readAll(t, tr, t.Context())
		if err != nil || sum(got) != sum(s.data) {
			t.Fatalf("read %d bytes, %v; want all %d", len(got), err, len(s.data))
		}
		if r := s.requests(); len(r) != 2 || r[1].Header.Get("If-Range") != lm {
			t.Fatalf("want one continuation with If-Range %q", lm)
		}
	})
}

// Every way a server can fail to prove the continuation is the same body
// ends the read with a resume.Error naming why, and the caller holds only
// the bytes of the first answer: never two answers spliced.
func TestResumeRefusesWhatCannotBeProven(t *testing.T) {
	const size, cut = 50_000, 20_000
	cases := []struct {
		name    string
		header  []string
		answer  func(n int, r *http.Request, resp *http.Response) *http.Response
		why     string
		noRange bool // the refusal comes before any Range request
	}{
		{name: "no validator", why: "no ETag or Last-Modified", noRange: true},
		{name: "weak ETag only", header: []string{"Etag", `W/"v1"`}, why: "weak ETag", noRange: true},
		{name: "malformed ETag", header: []string{"Etag", `v1`}, why: "malformed", noRange: true},
		{name: "Last-Modified equal to Date", header: []string{"Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT",
			"Date", "Mon, 02 Jan 2006 15:04:05 GMT"}, why: "within a second of Date", noRange: true},
		{name: "changed: 200 with new bytes and ETag", header: []string{"Etag", `"v1"`},
			answer: func(n int, r *http.Request, resp *http.Response) *http.Response {
				if n == 0 {
					return resp
				}
				resp.StatusCode = 200
				resp.Header.Set("Etag", `"v2"`)
				resp.Header.Del("Content-Range")
				resp.Body = io.NopCloser(strings.NewReader(strings.Repeat("N", size)))
				resp.ContentLength = size
				return resp
			}, why: "answered 200"},
		{name: "Range ignored: 200 whole", header: []string{"Etag", `"v1"`},
			answer: func(n int, r *http.Request, resp *http.Response) *http.Response {
				if n > 0 {
					resp.StatusCode = 200
					resp.Header.Del("Content-Range")
				}
				return resp
			}, why: "answered 200"},
		{name: "206 with a new ETag", header: []string{"Etag", `"v1"`},
			answer: func(n int, r *http.Request, resp *http.Response) *http.Response {
				if n > 0 {
					resp.Header.Set("Etag", `"v2"`)
				}
				return resp
			}, why: `ETag "\"v2\""`},
		{name: "Content-Range starts elsewhere", header: []string{"Etag", `"v1"`},
			answer: lieRange(func(k int64) string { return fmt.Sprintf("bytes 0-%d/%d", size-1, size) }), why: "does not start at byte 19984"},
		{name: "Content-Range total differs", header: []string{"Etag", `"v1"`},
			answer: lieRange(func(k int64) string { return fmt.Sprintf("bytes %d-%d/%d", k, size, size+1) }), why: "first answer was 50000 bytes"},
		{name: "Content-Range unknown total", header: []string{"Etag", `"v1"`},
			answer: lieRange(func(k int64) string { return fmt.Sprintf("bytes %d-%d/*", k, size-1) }), why: "does not say the total"},
		{name: "Content-Range garbage with a terminal escape", header: []string{"Etag", `"v1"`},
			answer: lieRange(func(k int64) string { return "bytes \x1b[2J" }), why: `"bytes \x1b[2J"`},
		{name: "Content-Range ends past total", header: []string{"Etag", `"v1"`},
			answer: lieRange(func(k int64) string { return fmt.Sprintf("bytes %d-%d/%d", k, size, size) }), why: "ends past"},
		{name: "shifted bytes under a true-looking Content-Range", header: []string{"Etag", `"v1"`},
			answer: func(n int, r *http.Request, resp *http.Response) *http.Response {
				if n > 0 {
					k, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.Header.Get("Range"), "bytes="), "-"))
					shifted := append(append([]byte(nil), s0(resp)[k+500:]...), make([]byte, 500)...)
					resp.Body = io.NopCloser(bytes.NewReader(shifted))
				}
				return resp
			}, why: "differ from those already received"},
		{name: "416 with another total", header: []string{"Etag", `"v1"`},
			answer: func(n int, r *http.Request, resp *http.Response) *http.Response {
				if n > 0 {
					resp.StatusCode = 416
					resp.Header.Set("Content-Range", "bytes */"+strconv.Itoa(size))
					resp.Body, resp.ContentLength = http.NoBody, 0
				}
				return resp
			}, why: "416"},
		{name: "404 to the Range request", header: []string{"Etag", `"v1"`},
			answer: func(n int, r *http.Request, resp *http.Response) *http.Response {
				if n > 0 {
					resp.StatusCode = 404
				}
				return resp
			}, why: "answered 404"},
		{name: "decompressed in transit", header: []string{"Etag", `"v1"`},
			answer: func(n int, r *http.Request, resp *http.Response) *http.Response {
				resp.Uncompressed = true
				return resp
			}, why: "decompressed", noRange: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newFileServer(size, tc.header...)
				s.cut, s.answer = cut, tc.answer
				tr := newTransport(s, retry.Policy{Rand: constRand(0.5)})
				ctx, out := retry.WithOutcome(context.WithValue(t.Context(), dataKey{}, s.data))
				got, err := readAll(t, tr, ctx)
				var re *resume.Error
				if !errors.As(err, &re) || !errors.Is(err, resume.ErrRefused) {
					t.Fatalf("read ended with %v; want a resume.Error", err)
				}
				if !strings.Contains(re.Reason, tc.why) {
					t.Errorf("reason %q; want it to say %q", re.Reason, tc.why)
				}
				if strings.ContainsRune(err.Error(), 0x1b) {
					t.Errorf("error text carries a raw escape: %q", err)
				}
				if !bytes.Equal(got, s.data[:cut]) || re.Offset != cut {
					t.Errorf("caller holds %d bytes (offset %d); want exactly the first %d, unspliced", len(got), re.Offset, cut)
				}
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("the break itself is lost from %v", err)
				}
				if n := len(s.requests()); tc.noRange && n != 1 || !tc.noRange && n != 2 {
					t.Errorf("%d requests sent", n)
				}
				if !errors.Is(out.Stop, resume.ErrRefused) {
					t.Errorf("outcome stop %v; want resume.ErrRefused", out.Stop)
				}
			})
		})
	}
}

// s0 is the whole file behind a fileServer answer (its test data).
func s0(resp *http.Response) []byte { return resp.Request.Context().Value(dataKey{}).([]byte) }

type dataKey struct{}

// lieRange answers continuations with the Content-Range lie returns.
func lieRange(lie func(k int64) string) func(int, *http.Request, *http.Response) *http.Response {
	return func(n int, r *http.Request, resp *http.Response) *http.Response {
		if n > 0 {
			k, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(r.Header.Get("Range"), "bytes="), "-"), 10, 64)
			resp.Header.Set("Content-Range", lie(k))
			resp.ContentLength = -1
		}
		return resp
	}
}

// A body that broke exactly at its end (the last byte arrived, then the
// connection reset) is complete when the server answers 416 with that total.
func TestResume416AtTheEndIsComplete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(40_000, "Etag", `"v1"`)
		s.answer = func(n int, r *http.Request, resp *http.Response) *http.Response {
			if n == 0 {
				resp.ContentLength = -1 // chunked: the end is not known until EOF
				resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(s.data), failReader{io.ErrUnexpectedEOF}))
			}
			return resp
		}
		tr := newTransport(s, retry.Policy{Rand: constRand(0.5)})
		got, err := readAll(t, tr, t.Context())
		if err != nil || sum(got) != sum(s.data) {
			t.Fatalf("read %d bytes, %v; want all %d and io.EOF", len(got), err, len(s.data))
		}
	})
}

type failReader struct{ err error }

func (e failReader) Read([]byte) (int, error) { return 0, e.err }

// Opting out, per request or by leaving the body layer out, gives the
// plain failure.
func TestResumeOptOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		tr   func(http.RoundTripper) http.RoundTripper
		ctx  func(context.Context) context.Context
	}{
		{"no body layer", func(s http.RoundTripper) http.RoundTripper { return retry.New(s, retry.Policy{}) },
			func(c context.Context) context.Context { return c }},
		{"context", func(s http.RoundTripper) http.RoundTripper { return newTransport(s, retry.Policy{}) }, resume.Off},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newFileServer(50_000, "Etag", `"v1"`)
				s.cut = 10_000
				got, err := readAll(t, tc.tr(s), tc.ctx(t.Context()))
				if !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, resume.ErrRefused) || len(got) != 10_000 {
					t.Fatalf("read %d bytes, %v; want 10000 and the plain unexpected EOF", len(got), err)
				}
				if n := len(s.requests()); n != 1 {
					t.Errorf("%d requests; opted out means no continuation", n)
				}
			})
		})
	}
}

// A continuation is an attempt under the policy: a 503 to the Range
// request is re-sent after its backoff, and the attempts add up.
func TestResumeRangeRequestRetriedUnderThePolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(50_000, "Etag", `"v1"`)
		s.cut = 30_000
		s.answer = func(n int, r *http.Request, resp *http.Response) *http.Response {
			if n == 1 || n == 2 {
				h := http.Header{}
				h.Set("Retry-After", "7")
				return respond(r, 503, h, "busy")
			}
			return resp
		}
		tr := newTransport(s, retry.Policy{Rand: constRand(0)})
		ctx, out := retry.WithOutcome(t.Context())
		start := time.Now()
		got, err := readAll(t, tr, ctx)
		if err != nil || sum(got) != sum(s.data) {
			t.Fatalf("read %d bytes, %v", len(got), err)
		}
		if out.Attempts != 4 || out.Resumes != 1 {
			t.Errorf("outcome %+v; want 4 attempts, 1 resume", *out)
		}
		if waited := time.Since(start); waited < 14*time.Second {
			t.Errorf("took %v; the two Retry-After waits of 7s were not served", waited)
		}
	})
}

// A body that stops half-way and whose continuations stall too ends within
// the bounds: about one read timeout per attempt, then the stall budget,
// with a typed error and the bytes that arrived.
func TestResumeStalledBodyEndsWithinBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(100_000, "Etag", `"v1"`)
		s.cut, s.stall = 40_000, true
		s.answer = func(n int, r *http.Request, resp *http.Response) *http.Response {
			if n > 0 {
				resp.Body.(*cutBody).cut = -1 // nothing at all
				resp.Body.(*cutBody).data = resp.Body.(*cutBody).data[:1]
				resp.Body.(*cutBody).sent = 0
				resp.Body = stallBody{resp.Body.(*cutBody)}
			}
			return resp
		}
		p := retry.Policy{ReadTimeout: 2 * time.Second, StallTimeout: 5 * time.Second, MaxAttempts: 10, Rand: constRand(0.5)}
		tr := newTransport(s, p)
		ctx, out := retry.WithOutcome(t.Context())
		start := time.Now()
		got, err := readAll(t, tr, ctx)
		took := time.Since(start)
		if !errors.Is(err, retry.ErrStalled) {
			t.Fatalf("read ended with %v; want ErrStalled", err)
		}
		var rt *liveness.ReadTimeoutError
		if !errors.As(err, &rt) {
			t.Errorf("the last cause is lost: %v", err)
		}
		if len(got) != 40_000 {
			t.Errorf("caller holds %d bytes; want the 40000 that arrived", len(got))
		}
		// The first timeout (2s), the first continuation never withheld,
		// its timeout (2s); after that a re-send must fit in 5s of silence.
		if limit := p.StallTimeout + 2*p.ReadTimeout + time.Second; took > limit {
			t.Errorf("took %v; want at most %v", took, limit)
		}
		if out.Attempts < 2 || out.Attempts >= p.MaxAttempts {
			t.Errorf("attempts %d: want the stall budget, not the attempt cap, to end it", out.Attempts)
		}
	})
}

// stallBody never delivers a byte until closed.
type stallBody struct{ b *cutBody }

func (s stallBody) Read([]byte) (int, error) {
	<-s.b.closed
	return 0, errors.New("read on a closed body")
}
func (s stallBody) Close() error { return s.b.Close() }

// A body that goes silent after its headers fails the read after
// ReadTimeout with a typed timeout, instead of blocking until killed; a
// slow body that keeps sending is never cut however long it takes.
func TestStreamedBodyIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(10_000)
		s.cut, s.stall = 3_000, true
		tr := newTransport(s, retry.Policy{ReadTimeout: 5 * time.Second})
		start := time.Now()
		got, err := readAll(t, tr, resume.Off(t.Context()))
		var rt *liveness.ReadTimeoutError
		if !errors.As(err, &rt) || rt.After != 5*time.Second {
			t.Fatalf("read ended with %v; want a ReadTimeoutError after 5s", err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%v is not a timeout to errors.As(net.Error)", err)
		}
		if took := time.Since(start); took != 5*time.Second {
			t.Errorf("the read failed after %v; want exactly the 5s of silence", took)
		}
		if len(got) != 3_000 {
			t.Errorf("caller holds %d bytes; want the 3000 that arrived", len(got))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		slow := &tickBody{n: 20, every: 4 * time.Second}
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: slow, ContentLength: -1, Request: r}, nil
		})
		got, err := readAll(t, newTransport(inner, retry.Policy{ReadTimeout: 5 * time.Second}), t.Context())
		if err != nil || len(got) != 20 {
			t.Fatalf("a byte every 4s with a 5s read timeout: %d bytes, %v; want all 20", len(got), err)
		}
	})
}

// tickBody sends one byte every interval.
type tickBody struct {
	n     int
	every time.Duration
}

func (b *tickBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(b.every)
	b.n--
	p[0] = 'x'
	return 1, nil
}
func (b *tickBody) Close() error { return nil }

// Closing the body while a continuation waits out its backoff ends the
// wait at once.
func TestResumeCloseDuringTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(50_000, "Etag", `"v1"`)
		s.cut = 10_000
		tr := newTransport(s, retry.Policy{InitialBackoff: time.Hour, MaxBackoff: time.Hour, Rand: constRand(0.5)})
		resp, err := tr.RoundTrip(get(t.Context(), api))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() {
			_, err := io.ReadAll(resp.Body)
			done <- err
		}()
		synctest.Wait() // the reader sleeps in the backoff
		resp.Body.Close()
		if err := <-done; err == nil {
			t.Fatal("a read cut by Close reported success")
		}
		if n := len(s.requests()); n != 1 {
			t.Errorf("%d requests; a closed body is not continued", n)
		}
	})
}

// A caller's own continuation (bytes=N-, as a download tool sends after a
// restart) is resumed too, from where its 206 began.
func TestResumeCallersOwnRange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(100_000, "Etag", `"v1"`)
		s.cut = 20_000
		tr := newTransport(s, retry.Policy{Rand: constRand(0.5)})
		req := get(t.Context(), api)
		req.Header.Set("Range", "bytes=10000-")
		req.Header.Set("If-Range", `"v1"`)
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 206 {
			t.Fatalf("RoundTrip: %v", err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, s.data[10_000:]) {
			t.Fatalf("read %d bytes, %v; want the %d from byte 10000", len(got), err, len(s.data)-10_000)
		}
		reqs := s.requests()
		if len(reqs) != 5 || reqs[1].Header.Get("Range") != "bytes=29984-" {
			t.Errorf("%d requests, the first continuation asked %q; want 5, from byte 29984 (30000 less the seam)", len(reqs), reqs[1].Header.Get("Range"))
		}
	})
}

// A continuation is a re-send: a spent retry budget refuses it, with
// ErrBudget, and nothing is sent.
func TestResumeWithdrawsFromTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(50_000, "Etag", `"v1"`)
		s.cut = 10_000
		b := &budget.Budget{Ratio: 0.01, MinPerSecond: -1, MaxTokens: 1}
		tr := newTransport(s, retry.Policy{Budget: b, Rand: constRand(0.5)})
		_, err := readAll(t, tr, t.Context())
		if !errors.Is(err, retry.ErrBudget) {
			t.Fatalf("read ended with %v; want ErrBudget", err)
		}
		if n := len(s.requests()); n != 1 {
			t.Errorf("%d requests; the budget refused the continuation", n)
		}
	})
}

// A continuation holds a slot of the concurrency gate for its attempt, like
// any attempt: with the only slot taken, it waits.
func TestResumeAcquiresTheGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(50_000, "Etag", `"v1"`)
		s.cut = 30_000
		gate := semaphore.NewWeighted(1)
		tr := newTransport(s, retry.Policy{Rand: constRand(0.5)})
		resp, err := tr.RoundTrip(get(retry.WithGate(t.Context(), gate), api))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if !gate.TryAcquire(1) {
			t.Fatal("the first attempt kept its slot after handing the response back")
		}
		done := make(chan error)
		go func() {
			_, err := io.ReadAll(resp.Body)
			done <- err
		}()
		synctest.Wait()
		if n := len(s.requests()); n != 1 {
			t.Fatalf("%d requests sent while the gate was full", n)
		}
		gate.Release(1)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := len(s.requests()); n != 2 {
			t.Errorf("%d requests; want the continuation once the slot was free", n)
		}
	})
}

// A continuation that sends more than the length every answer agreed on
// (chunked, so net/http cannot tell) ends the read at that length with a
// resume.Error; no byte past the body reaches the caller.
func TestResumeRefusesBytesPastTheLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(50_000, "Etag", `"v1"`)
		s.cut = 20_000
		s.answer = func(n int, r *http.Request, resp *http.Response) *http.Response {
			if n > 0 {
				k, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.Header.Get("Range"), "bytes="), "-"))
				resp.Body = io.NopCloser(bytes.NewReader(append(append([]byte(nil), s.data[k:]...), "EXTRA"...)))
				resp.ContentLength = -1
			}
			return resp
		}
		got, err := readAll(t, newTransport(s, retry.Policy{Rand: constRand(0.5)}), t.Context())
		var re *resume.Error
		if !errors.As(err, &re) || !strings.Contains(re.Reason, "more bytes") {
			t.Fatalf("read ended with %v; want a resume.Error about the excess", err)
		}
		if !bytes.Equal(got, s.data) {
			t.Errorf("caller holds %d bytes; want exactly the %d of the body, nothing past it", len(got), len(s.data))
		}
	})
}

// A continuation whose backoff cannot end before the caller's deadline is
// not waited for: the read fails at once with ErrDeadline, which is also
// context.DeadlineExceeded, and nothing more is sent.
func TestResumeWaitBeyondTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFileServer(50_000, "Etag", `"v1"`)
		s.cut = 10_000
		tr := newTransport(s, retry.Policy{InitialBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second, Rand: constRand(0.5)})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		got, err := readAll(t, tr, ctx)
		if !errors.Is(err, retry.ErrDeadline) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("read ended with %v; want ErrDeadline", err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("waited %v before giving up; a wait past the deadline is not started", waited)
		}
		if len(got) != 10_000 || len(s.requests()) != 1 {
			t.Errorf("%d bytes, %d requests; want the 10000 that arrived and no continuation", len(got), len(s.requests()))
		}
	})
}

// waits returns the Wait of each RetryScheduled event, in order.
func (e *events) waits() []time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []time.Duration
	for _, ev := range e.es {
		if ev.Kind == event.RetryScheduled {
			out = append(out, ev.Wait)
		}
	}
	return out
}

// A body that broke after delivering at least 1 MiB since its last break is
// continued at once, without the backoff (ADR 220); one that delivered
// less, or a continuation that broke before a new byte, waits the backoff
// as any re-send does. The backoff here is an hour, so any wait shows.
func TestResumeAtOnceAfterProgress(t *testing.T) {
	const mib = 1 << 20
	p := func(ev *events) retry.Policy {
		return retry.Policy{InitialBackoff: time.Hour, MaxBackoff: 4 * time.Hour, StallTimeout: 10 * time.Hour, Rand: constRand(0.5), Reporter: ev}
	}
	t.Run("every piece 1 MiB", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// Each continuation repeats the 16-byte seam, so a cut of
			// 1 MiB + 16 bytes leaves exactly 1 MiB of new bytes a piece.
			s := newFileServer(4*mib+100, "Etag", `"v1"`)
			s.cut = mib + 16
			ev := &events{}
			ctx, out := retry.WithOutcome(t.Context())
			start := time.Now()
			got, err := readAll(t, newTransport(s, p(ev)), ctx)
			if err != nil || sum(got) != sum(s.data) {
				t.Fatalf("read %d bytes, %v; want all %d", len(got), err, len(s.data))
			}
			if took := time.Since(start); took != 0 || out.Waited != 0 {
				t.Errorf("took %v, waited %v; every continuation followed 1 MiB of progress and is sent at once", took, out.Waited)
			}
			w := ev.waits()
			if len(w) != 4 || out.Resumes != 4 {
				t.Fatalf("%d resume events, %d resumes; want 4", len(w), out.Resumes)
			}
			for i, d := range w {
				if d != 0 {
					t.Errorf("continuation %d scheduled after %v; want 0", i+1, d)
				}
			}
		})
	})
	t.Run("pieces a byte short", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// The first answer delivers 1 MiB + 15 bytes, each continuation
			// one byte less than 1 MiB of new ones.
			s := newFileServer(3*mib, "Etag", `"v1"`)
			s.cut = mib + 15
			ev := &events{}
			ctx, out := retry.WithOutcome(t.Context())
			start := time.Now()
			got, err := readAll(t, newTransport(s, p(ev)), ctx)
			if err != nil || sum(got) != sum(s.data) {
				t.Fatalf("read %d bytes, %v; want all %d", len(got), err, len(s.data))
			}
			w := ev.waits()
			if len(w) != 2 || w[0] != 0 || w[1] != 30*time.Minute {
				t.Fatalf("waits %v; want [0 30m]: the first piece was 1 MiB, the second a byte short, so its continuation waits the first backoff", w)
			}
			if took := time.Since(start); took != 30*time.Minute || out.Waited != 30*time.Minute {
				t.Errorf("took %v, waited %v; want the one backoff of 30m", took, out.Waited)
			}
		})
	})
	t.Run("continuation broken at its seam", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newFileServer(3*mib, "Etag", `"v1"`)
			s.cut = 2 * mib
			s.answer = func(n int, r *http.Request, resp *http.Response) *http.Response {
				if n == 1 {
					resp.Body.(*cutBody).cut = 16 // the seam and not a byte more
				}
				return resp
			}
			ev := &events{}
			ctx, out := retry.WithOutcome(t.Context())
			got, err := readAll(t, newTransport(s, p(ev)), ctx)
			if err != nil || sum(got) != sum(s.data) {
				t.Fatalf("read %d bytes, %v; want all %d", len(got), err, len(s.data))
			}
			// The second re-send since progress: ceiling 2h, at Rand 0.5 1h.
			if w := ev.waits(); len(w) != 2 || w[0] != 0 || w[1] != time.Hour {
				t.Fatalf("waits %v; want [0 1h]: a continuation that brought no new byte is followed by the backoff", w)
			}
			if out.Resumes != 2 || out.Attempts != 3 {
				t.Errorf("outcome %+v; want 2 resumes, 3 attempts", *out)
			}
		})
	})
	t.Run("one byte a connection", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// A server that gives one new byte a connection is paced by
			// the backoff every time, never hammered in a loop.
			s := newFileServer(200, "Etag", `"v1"`)
			s.cut = 17
			ev := &events{}
			pol := p(ev)
			pol.InitialBackoff, pol.MaxBackoff = time.Second, time.Second
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			readAll(t, newTransport(s, pol), ctx)
			for i, d := range ev.waits() {
				if d == 0 {
					t.Fatalf("continuation %d sent at once after a piece of one byte", i+1)
				}
			}
			if n := len(s.requests()); n > 21 {
				t.Errorf("%d requests in 10s with a 0.5s backoff; want at most 21", n)
			}
		})
	})
}

// A body read through a shared tracker is progress: the silence the
// tracker measures ends with the bytes the caller reads.
func TestResponseBodyReadsAreProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tracker := liveness.New()
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) { return respond(r, 200, nil, "OK"), nil })
		resp, err := newTransport(inner, retry.Policy{}).RoundTrip(get(liveness.With(t.Context(), tracker), api))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second)
		if tracker.Silence() != 30*time.Second {
			t.Fatalf("silence %v", tracker.Silence())
		}
		if _, err := io.ReadAll(resp.Body); err != nil {
			t.Fatal(err)
		}
		if tracker.Silence() != 0 {
			t.Errorf("silence after reading the body = %v, want 0", tracker.Silence())
		}
		resp.Body.Close()
	})
}

package steady_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/paginate"
)

// Bodies a server may send: not JSON, empty, endless, and compressed into a
// bomb. Each is tried through GetJSON and as page 2 of a walk, whose page 1
// is good and must be yielded first.

// twoPageServer answers page 1 with one item and a Link to page 2, and
// page 2 with bad.
func twoPageServer(t *testing.T, bad http.HandlerFunc) *hostileServer {
	t.Helper()
	return newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" || r.URL.Path == "/bad" {
			bad(w, r)
			return
		}
		w.Header().Set("Link", `</items?page=2>; rel="next"`)
		io.WriteString(w, `[{"id":1}]`)
	})
}

// walkToBadPage walks from page 1 and checks that page 1 was yielded before
// the error, which it returns.
func walkToBadPage(t *testing.T, cl *steady.Client, opt paginate.Options) error {
	t.Helper()
	w, err := cl.Walk("/items", nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := hostileWalk(t, w.All(context.Background()))
	if len(pages) != 1 || pages[0].Number != 1 || pages[0].Items.Len() != 1 {
		t.Fatalf("%d pages before the error %v; want page 1 yielded", len(pages), err)
	}
	if err == nil {
		t.Fatal("the walk ended without an error")
	}
	if sum := w.Summary(); sum.Complete || sum.Next == nil || sum.Next.Query().Get("page") != "2" {
		t.Errorf("summary %+v: want an incomplete walk that would resume at page 2", sum)
	}
	return err
}

func TestHostileBodyNotJSON(t *testing.T) {
	cases := []struct {
		name string
		body string
		// GetJSON reports the offset of encoding/json (bytes read when the
		// error was found); the walk reports the offset of the bad byte.
		getOffset, walkOffset int64
	}{
		{"HTML", "<html><body>Service Unavailable</body></html>", 1, 0},
		{"array cut by garbage", `[{"id":1},{"id":2}<html>`, 19, 18},
		{"trailing comma", `[{"id":1},]`, 11, 10},
		{"binary", "\x1f\x8b\x08\x00\x00\x00", 1, 0},
		{"a byte order mark", "\xef\xbb\xbf[]", 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := twoPageServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, c.body) })
			cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})

			err := cl.GetJSON(context.Background(), "/bad?api_key_hint=1", nil, new([]any))
			var de *steady.DecodeError
			if !errors.As(err, &de) || de.Offset != c.getOffset || !strings.Contains(de.URL, srv.URL+"/bad") {
				t.Errorf("GetJSON: %v, want a *DecodeError naming the URL at byte %d", err, c.getOffset)
			}

			err = walkToBadPage(t, cl, paginate.Options{})
			var pe *paginate.Error
			if !errors.As(err, &pe) || !errors.Is(err, paginate.ErrNotJSON) || pe.Page != 2 || pe.Offset != c.walkOffset {
				t.Fatalf("walk: %v, want paginate.ErrNotJSON on page 2 at byte %d", err, c.walkOffset)
			}
			if !strings.Contains(pe.URL, "page=2") || !strings.Contains(err.Error(), "byte "+strconv.FormatInt(c.walkOffset, 10)) {
				t.Errorf("walk error %q must name the page URL and the offset", err)
			}
		})
	}
}

func TestHostileBodyEmpty(t *testing.T) {
	cases := []struct {
		name string
		send func(w http.ResponseWriter)
	}{
		{"Content-Length 0", func(w http.ResponseWriter) { w.Header().Set("Content-Length", "0") }},
		{"chunked, no chunks", func(w http.ResponseWriter) { w.(http.Flusher).Flush() }},
		{"white space only", func(w http.ResponseWriter) { io.WriteString(w, " \r\n\t ") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := twoPageServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				c.send(w)
			})
			cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})

			err := cl.GetJSON(context.Background(), "/bad", nil, new(any))
			var de *steady.DecodeError
			if !errors.As(err, &de) || !strings.Contains(de.URL, "/bad") || de.Err == nil {
				t.Errorf("GetJSON: %v, want a *DecodeError naming the URL", err)
			}
			if errors.Is(err, io.EOF) {
				t.Errorf("GetJSON: %v reads as a clean io.EOF", err)
			}

			err = walkToBadPage(t, cl, paginate.Options{})
			var pe *paginate.Error
			if !errors.As(err, &pe) || pe.Page != 2 || !(errors.Is(err, paginate.ErrEmptyBody) || errors.Is(err, paginate.ErrNotJSON)) {
				t.Fatalf("walk: %v, want paginate.ErrEmptyBody (or ErrNotJSON for white space) on page 2", err)
			}
			if c.name != "white space only" && !errors.Is(err, paginate.ErrEmptyBody) {
				t.Errorf("walk: %v, want paginate.ErrEmptyBody", err)
			}
		})
	}
}

// streamer is a handler that sends prefix, then fill over and over until a
// write fails (the client went away) or limit bytes went out, then suffix.
// It records how much it wrote and when it returned.
type streamer struct {
	prefix, fill, suffix []byte
	limit                int64
	headers              map[string]string

	sent     atomic.Int64
	done     chan struct{}
	writeErr atomic.Bool
	once     sync.Once
	acceptGz atomic.Bool
}

func newStreamer(prefix, fill, suffix []byte, limit int64, headers map[string]string) *streamer {
	return &streamer{prefix: prefix, fill: fill, suffix: suffix, limit: limit, headers: headers, done: make(chan struct{})}
}

func (s *streamer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer s.once.Do(func() { close(s.done) })
	s.acceptGz.Store(strings.Contains(r.Header.Get("Accept-Encoding"), "gzip"))
	for k, v := range s.headers {
		w.Header().Set(k, v)
	}
	write := func(b []byte) bool {
		n, err := w.Write(b)
		s.sent.Add(int64(n))
		if err != nil {
			s.writeErr.Store(true)
			return false
		}
		return true
	}
	if !write(s.prefix) {
		return
	}
	for s.sent.Load() < s.limit {
		if r.Context().Err() != nil || !write(s.fill) {
			s.writeErr.Store(true)
			return
		}
	}
	write(s.suffix)
}

// waitStopped fails the test when the handler is still sending: the client
// gave up, so the server must notice. With hungUp, the handler must also
// have seen the client go away before its limit, which holds when more
// than the loopback buffers hold was left to send.
func (s *streamer) waitStopped(t *testing.T, hungUp bool) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second): // a hang guard, not a measurement
		t.Fatalf("the handler is still sending after %d bytes; it must stop when the client goes away", s.sent.Load())
	}
	if hungUp && !s.writeErr.Load() {
		t.Errorf("the handler ran to its limit (%d bytes sent); the client should have hung up first", s.sent.Load())
	}
}

func TestHostileBodyNeverEnds(t *testing.T) {
	const limit = 256 << 10
	t.Run("walk", func(t *testing.T) {
		st := newStreamer([]byte("["), []byte(`{"id":1},`), []byte("{}]"), 256<<20, nil)
		srv := twoPageServer(t, st.ServeHTTP)
		cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
		err := walkToBadPage(t, cl, paginate.Options{MaxPageBytes: limit})
		var big *liveness.BodyTooLargeError
		if !errors.Is(err, liveness.ErrBodyTooLarge) || !errors.As(err, &big) || big.Limit != limit {
			t.Fatalf("walk: %v, want liveness.ErrBodyTooLarge at %d bytes", err, limit)
		}
		var pe *paginate.Error
		if !errors.As(err, &pe) || pe.Page != 2 {
			t.Errorf("walk: %v, want a *paginate.Error about page 2", err)
		}
		if n := srv.hits("/items"); n != 2 {
			t.Errorf("%d requests, want 2: a body over the limit is not re-sent", n)
		}
		st.waitStopped(t, true)
	})
	t.Run("GetJSON", func(t *testing.T) {
		// GetJSON has no size bound: it decodes whatever arrives. The test
		// stops the server at 80 MiB (a valid JSON document then) so that
		// it ends; a GetJSON bounded like a page walk (64 MiB by default)
		// hangs up before that with liveness.ErrBodyTooLarge.
		st := newStreamer([]byte(`{"a":"`), bytes.Repeat([]byte("a"), 32<<10), []byte(`"}`), 80<<20, nil)
		srv := twoPageServer(t, st.ServeHTTP)
		cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
		err := cl.GetJSON(context.Background(), "/bad", nil, new(struct{}))
		if !errors.Is(err, liveness.ErrBodyTooLarge) {
			t.Errorf("GetJSON read %d bytes of an endless body and returned %v; want liveness.ErrBodyTooLarge at a bound",
				st.sent.Load(), err)
		}
		st.waitStopped(t, true)
	})
}

// gzipMember returns one gzip member that inflates to n copies of b.
func gzipMember(t testing.TB, b byte, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{b}, 64<<10)
	for n > 0 {
		k := min(n, len(chunk))
		zw.Write(chunk[:k])
		n -= k
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipOf(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, s)
	zw.Close()
	return buf.Bytes()
}

func TestHostileGzipBomb(t *testing.T) {
	// Concatenated gzip members are one gzip stream to net/http, so a 4 MiB
	// member (about 4 KB compressed) repeated 8,192 times is about 33 MB on
	// the wire, more than loopback buffers hold, and 32 GiB inflated.
	// net/http inflates only when it asked for gzip itself; the streamer
	// records that it did.
	const member = 4 << 20
	gz := map[string]string{"Content-Encoding": "gzip", "Content-Type": "application/json"}
	t.Run("walk", func(t *testing.T) {
		const limit = 1 << 20
		zeros := gzipMember(t, '0', member)
		st := newStreamer(gzipOf(t, "["), zeros, nil, int64(len(zeros))*8192, gz)
		srv := twoPageServer(t, st.ServeHTTP)
		cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
		err := walkToBadPage(t, cl, paginate.Options{MaxPageBytes: limit})
		var big *liveness.BodyTooLargeError
		if !errors.As(err, &big) || big.Limit != limit {
			t.Fatalf("walk: %v, want liveness.ErrBodyTooLarge at %d inflated bytes", err, limit)
		}
		if !st.acceptGz.Load() {
			t.Fatal("the client did not ask for gzip, so nothing was inflated; the test proves nothing")
		}
		st.waitStopped(t, true)
	})
	t.Run("GetJSON", func(t *testing.T) {
		// As with an endless body, GetJSON inflates and decodes without a
		// bound; the bomb is cut at 80 MiB inflated so that the test ends.
		as := gzipMember(t, 'a', member)
		st := newStreamer(gzipOf(t, `{"a":"`), as, gzipOf(t, `"}`), int64(len(as))*20, gz)
		srv := twoPageServer(t, st.ServeHTTP)
		cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
		err := cl.GetJSON(context.Background(), "/bad", nil, new(struct{}))
		if !st.acceptGz.Load() {
			t.Fatal("the client did not ask for gzip, so nothing was inflated; the test proves nothing")
		}
		if !errors.Is(err, liveness.ErrBodyTooLarge) {
			t.Errorf("GetJSON inflated a gzip bomb (%d bytes on the wire, 80 MiB inflated) and returned %v; want liveness.ErrBodyTooLarge at a bound",
				st.sent.Load(), err)
		}
		st.waitStopped(t, false) // 82 KB on the wire: the buffers hold it all
	})
	t.Run("GetJSON with gzip not asked for", func(t *testing.T) {
		// A caller who sets Accept-Encoding gets the compressed bytes as
		// they are: nothing inflates, and the body is not JSON.
		zeros := gzipMember(t, '0', member)
		st := newStreamer(nil, zeros, nil, int64(len(zeros)), gz)
		srv := twoPageServer(t, st.ServeHTTP)
		cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/bad", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		head := make([]byte, 2)
		if _, err := io.ReadFull(resp.Body, head); err != nil || head[0] != 0x1f || head[1] != 0x8b {
			t.Errorf("body starts %x (%v), want the gzip magic: net/http must not inflate what the caller asked for", head, err)
		}
	})
}

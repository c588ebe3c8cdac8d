package steady_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

// Connections a server may misuse: redirects in a loop, and a connection
// closed after (or before) the response headers.

func TestHostileRedirectLoop(t *testing.T) {
	srv := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/a"):
			http.Redirect(w, r, "/b?api_key=s3cr3t", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/b"):
			http.Redirect(w, r, "/a?page=2", http.StatusTemporaryRedirect)
		default: // /items: page 1 of a walk whose page 2 is the loop
			w.Header().Set("Link", `</a?page=2>; rel="next"`)
			io.WriteString(w, `[{"id":1}]`)
		}
	})
	cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
	check := func(t *testing.T, err error, hits int) {
		t.Helper()
		// net/http's limit: the first request and nine redirects are sent,
		// the tenth redirect is refused.
		if hits != 10 {
			t.Errorf("%d requests in the loop, want 10", hits)
		}
		if err == nil || !strings.Contains(err.Error(), "10 redirects") {
			t.Fatalf("err %v, want one that says it stopped after 10 redirects", err)
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("error %q quotes the Location's key", err)
		}
		if !typedCause(err) {
			t.Errorf("the cause of %q (%#v) can only be told by its text; want a sentinel or a type to match with errors.Is/As",
				err, hostileLeaves(err))
		}
	}
	t.Run("GetJSON", func(t *testing.T) {
		before := srv.total.Load()
		err := cl.GetJSON(context.Background(), "/a", nil, new(any))
		check(t, err, int(srv.total.Load()-before))
	})
	t.Run("walk", func(t *testing.T) {
		before := srv.total.Load()
		pages, err := hostileWalk(t, cl.Pages(context.Background(), "/items", nil, paginate.Options{}))
		if len(pages) != 1 {
			t.Fatalf("%d pages, want page 1 yielded before the loop", len(pages))
		}
		var pe *paginate.Error
		if !errors.As(err, &pe) || pe.Page != 2 {
			t.Errorf("walk: %v, want a *paginate.Error about page 2", err)
		}
		check(t, err, int(srv.total.Load()-before)-1)
	})
}

// hijacked answers by writing raw onto the connection and closing it.
func hijacked(t *testing.T, raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		buf.WriteString(raw)
		buf.Flush()
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.CloseWrite() // a FIN after what was written, as a crashing server sends
		}
		io.Copy(io.Discard, bufio.NewReader(conn)) // until the client hangs up
	}
}

func TestHostileServerClosesConnection(t *testing.T) {
	isErr := func(target error) func(error) bool {
		return func(err error) bool { return errors.Is(err, target) }
	}
	cases := []struct {
		name  string
		raw   string
		cause func(error) bool
		// extra is how many more requests the server may see than
		// attempts: net/http itself re-sends, once, a request whose reused
		// keep-alive connection was closed before any response byte.
		extra int
	}{
		{"after the headers, short of Content-Length",
			"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{\"id\":",
			isErr(io.ErrUnexpectedEOF), 0},
		{"after the headers, inside a chunked body",
			"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n[{\"id\":\r\n",
			isErr(io.ErrUnexpectedEOF), 0},
		{"after the headers, no body at all",
			"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n",
			isErr(io.ErrUnexpectedEOF), 0},
		{"before the headers", "", isErr(io.EOF), 1},
		{"in the middle of the headers", "HTTP/1.1 200 OK\r\nContent-Ty",
			func(err error) bool { var pe textproto.ProtocolError; return errors.As(err, &pe) }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := twoPageServer(t, hijacked(t, c.raw))
			cl := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
			check := func(t *testing.T, err error, attempts int) {
				t.Helper()
				var re *retry.Error
				if !errors.As(err, &re) || !errors.Is(err, retry.ErrExhausted) || re.Attempts != 3 {
					t.Errorf("err %v, want a *retry.Error after 3 attempts", err)
				}
				if !c.cause(err) {
					t.Errorf("err %v does not wrap the expected cause", err)
				}
				if attempts < 3 || attempts > 3+c.extra {
					t.Errorf("the server saw %d requests, want 3: the failure must be re-sent", attempts)
				}
			}
			t.Run("walk", func(t *testing.T) {
				before := srv.total.Load()
				err := walkToBadPage(t, cl, paginate.Options{})
				var pe *paginate.Error
				if !errors.As(err, &pe) || pe.Page != 2 {
					t.Errorf("walk: %v, want a *paginate.Error about page 2", err)
				}
				check(t, err, int(srv.total.Load()-before)-1)
			})
			t.Run("GetJSON", func(t *testing.T) {
				// GetJSON reads the body after the retry layer returned the
				// response, so a body cut short is never re-sent: a
				// *DecodeError after one attempt.
				before := srv.total.Load()
				err := cl.GetJSON(context.Background(), "/bad", nil, new(any))
				check(t, err, int(srv.total.Load()-before))
			})
		})
	}
}

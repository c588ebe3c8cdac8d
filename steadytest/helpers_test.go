package steadytest_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"sync"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// newClient returns a client with its own transport, whose connections are
// closed when the test ends so that goleak sees no client goroutines.
func newClient(t testing.TB) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// freshClient returns a client that opens a new connection per request, so
// that net/http's transparent re-send on a reused connection cannot hide a
// reset from the test.
func freshClient(t testing.TB) *http.Client {
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func newServer(t testing.TB, opt steadytest.ServerOptions) *steadytest.Server {
	s := steadytest.NewServer(opt)
	t.Cleanup(s.Close)
	return s
}

// get fetches url and returns the response with its body read.
func get(t testing.TB, c *http.Client, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp, body
}

var nextLink = regexp.MustCompile(`<([^>]*)>;\s*rel="next"`)

// nextFromLink returns the rel="next" target of a Link header, or "".
func nextFromLink(h http.Header) string {
	m := nextLink.FindStringSubmatch(h.Get("Link"))
	if m == nil {
		return ""
	}
	return m[1]
}

type linksPage struct {
	Items []steadytest.Row `json:"features"`
	Links []struct {
		Rel  string `json:"rel"`
		Href string `json:"href"`
	} `json:"links"`
}

func (p linksPage) next() string {
	for _, l := range p.Links {
		if l.Rel == "next" {
			return l.Href
		}
	}
	return ""
}

type cursorPage struct {
	Data       []steadytest.Row `json:"data"`
	NextCursor *string          `json:"next_cursor"`
}

func decode(t testing.TB, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decoding %.200q: %v", body, err)
	}
}

// pipeNet serves a handler over in-memory connections, for tests inside a
// synctest bubble, where real sockets would keep the clock from advancing.
type pipeNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	srv   *http.Server
	tr    *http.Transport
}

func newPipeNet(h http.Handler) *pipeNet {
	p := &pipeNet{conns: make(chan net.Conn), done: make(chan struct{})}
	p.srv = &http.Server{Handler: h}
	p.tr = &http.Transport{DialContext: p.dial}
	go p.srv.Serve(p)
	return p
}

func (p *pipeNet) client() *http.Client { return &http.Client{Transport: p.tr} }

func (p *pipeNet) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case p.conns <- s:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pipeNet) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

func (p *pipeNet) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

func (p *pipeNet) Addr() net.Addr { return pipeAddr{} }

// shutdown releases the handler's waits, then closes every connection.
func (p *pipeNet) shutdown(h *steadytest.Handler) {
	h.Close()
	p.srv.Close()
	p.tr.CloseIdleConnections()
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "127.0.0.1:80" }

package paginate_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/paginate"
)

// server is an httptest server that records the request URIs it answered.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	uris []string
}

func newServer(t *testing.T, tls bool, h func(w http.ResponseWriter, r *http.Request)) *server {
	t.Helper()
	s := &server{}
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.uris = append(s.uris, r.URL.RequestURI())
		s.mu.Unlock()
		h(w, r)
	})
	// Every request is watched: no key may reach an origin that does not
	// accept it (internal/wiretest).
	if tls {
		s.Server = wiretest.For(t).TLSServer(wrapped)
	} else {
		s.Server = wiretest.For(t).Server(wrapped)
	}
	return s
}

func (s *server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.uris...)
}

// client returns a client for s whose transport checks that every response
// body it handed out was closed by the end of the test.
func (s *server) client(t *testing.T) *http.Client {
	t.Helper()
	return countingClient(t, s.Client().Transport)
}

func countingClient(t *testing.T, next http.RoundTripper) *http.Client {
	t.Helper()
	c := &closeCounter{next: next}
	t.Cleanup(func() {
		if o, cl := c.opened.Load(), c.closed.Load(); o != cl {
			t.Errorf("%d response bodies opened, %d closed", o, cl)
		}
	})
	return &http.Client{Transport: c}
}

type closeCounter struct {
	next           http.RoundTripper
	opened, closed atomic.Int64
}

func (c *closeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if resp != nil {
		c.opened.Add(1)
		resp.Body = &countedBody{ReadCloser: resp.Body, c: c}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	c    *closeCounter
	once sync.Once
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.c.closed.Add(1) })
	return b.ReadCloser.Close()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// pageNumber reads the page query parameter, 1 when absent.
func pageNumber(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil {
		return 1
	}
	return n
}

// itemsJSON renders per items {"id":k} numbered from first.
func itemsJSON(first, per int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range per {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d}`, first+i)
	}
	b.WriteByte(']')
	return b.String()
}

// ids decodes the id of each item.
func ids(t *testing.T, items paginate.Items) []int {
	t.Helper()
	var out []int
	for _, it := range items.All() {
		var v struct{ ID int }
		if err := json.Unmarshal(it, &v); err != nil {
			t.Fatalf("item %q: %v", it, err)
		}
		out = append(out, v.ID)
	}
	return out
}

// collect ranges over a walk and returns the pages and the final error.
func collect(seq func(func(*paginate.Page, error) bool)) ([]*paginate.Page, error) {
	var pages []*paginate.Page
	for p, err := range seq {
		if err != nil {
			return pages, err
		}
		pages = append(pages, p)
	}
	return pages, nil
}

func seqInts(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

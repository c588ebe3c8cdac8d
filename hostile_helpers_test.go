package steady_test

import (
	"context"
	"go/token"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

// Helpers of the hostile-input catalogue (docs/reliability.md, "Hostile
// input catalogue"). Names start with "hostile" so they stay clear of the
// other tests of the package.

// The tests use fast() and newClient (client_test.go): quick retries on real
// sockets, where time is real, so they assert counts and causes, never
// durations.

// hostileServer is an httptest server that counts the requests it answered,
// per path and in all.
type hostileServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths map[string]int
	total atomic.Int64
}

func newHostileServer(t *testing.T, tls bool, h http.HandlerFunc) *hostileServer {
	t.Helper()
	s := &hostileServer{paths: make(map[string]int)}
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths[r.URL.Path]++
		s.mu.Unlock()
		s.total.Add(1)
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

func (s *hostileServer) hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paths[path]
}

// hostileWalk ranges over a walk and returns the pages yielded and the
// error that ended it. It fails the test when anything follows the error.
func hostileWalk(t *testing.T, seq func(func(*paginate.Page, error) bool)) ([]*paginate.Page, error) {
	t.Helper()
	var pages []*paginate.Page
	var last error
	for p, err := range seq {
		if last != nil {
			t.Errorf("the walk yielded (%v, %v) after its error %v", p, err, last)
		}
		if err != nil {
			last = err
			continue
		}
		pages = append(pages, p)
	}
	return pages, last
}

// hostileEvents records every event a client reports.
type hostileEvents struct {
	mu  sync.Mutex
	all []event.Event
}

func (r *hostileEvents) Report(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, e)
}

// kind returns the events of kind k; 0 means every event.
func (r *hostileEvents) kind(k event.Kind) []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.Event
	for _, e := range r.all {
		if k == 0 || e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// knownSentinels are the exported causes a caller can match with errors.Is.
// A sentinel added to steady for a failure the catalogue covers belongs
// here.
var knownSentinels = []error{
	retry.ErrExhausted, retry.ErrStalled, retry.ErrNotRetryable, retry.ErrRetryAfter,
	retry.ErrBudget, retry.ErrRateLimited,
	paginate.ErrCrossHost, paginate.ErrScheme, paginate.ErrDowngrade, paginate.ErrBadLink,
	paginate.ErrLinkMethod, paginate.ErrLoop, paginate.ErrStatus, paginate.ErrNotJSON,
	paginate.ErrEmptyBody, paginate.ErrNoItems, paginate.ErrBadCursor, paginate.ErrOptions,
	liveness.ErrBodyTooLarge, io.EOF, io.ErrUnexpectedEOF,
	context.Canceled, context.DeadlineExceeded,
}

// hostileLeaves returns the innermost causes of err: the errors of its
// chain that wrap nothing.
func hostileLeaves(err error) []error {
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			return hostileLeaves(inner)
		}
	case interface{ Unwrap() []error }:
		var out []error
		for _, inner := range u.Unwrap() {
			out = append(out, hostileLeaves(inner)...)
		}
		if len(out) > 0 {
			return out
		}
	}
	return []error{err}
}

// typedCause reports whether some innermost cause of err can be matched
// without reading its text: it is a known sentinel, or a value of an
// exported type (a *net.OpError, a *liveness.BodyTooLargeError, ...).
// Wrappers do not count: a *paginate.Error around an opaque string still
// leaves the caller parsing text to learn what went wrong.
func typedCause(err error) bool {
	for _, leaf := range hostileLeaves(err) {
		for _, s := range knownSentinels {
			if leaf == s {
				return true
			}
		}
		t := reflect.TypeOf(leaf)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Name() != "" && token.IsExported(t.Name()) {
			return true
		}
	}
	return false
}

// memNet serves a handler over in-memory connections, so that a test in a
// synctest bubble runs the real net/http client and server while the
// bubble's clock stays virtual (a real socket would keep it from moving).
type memNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	srv   *http.Server
	tr    *http.Transport
}

func newMemNet(h http.Handler) *memNet {
	m := &memNet{conns: make(chan net.Conn), done: make(chan struct{})}
	m.srv = &http.Server{Handler: h}
	m.tr = &http.Transport{DialContext: m.dial}
	go m.srv.Serve(m)
	return m
}

func (m *memNet) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case m.conns <- s:
		return c, nil
	case <-m.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Accept, Close and Addr make memNet the server's listener.
func (m *memNet) Accept() (net.Conn, error) {
	select {
	case c := <-m.conns:
		return c, nil
	case <-m.done:
		return nil, net.ErrClosed
	}
}

func (m *memNet) Close() error {
	m.once.Do(func() { close(m.done) })
	return nil
}

func (m *memNet) Addr() net.Addr { return memAddr{} }

// shutdown ends the server and the client's connections, so that every
// goroutine of the bubble can exit.
func (m *memNet) shutdown() {
	m.srv.Close()
	m.tr.CloseIdleConnections()
}

type memAddr struct{}

func (memAddr) Network() string { return "pipe" }
func (memAddr) String() string  { return "api.test:80" }

// arrivals records when each request reached a handler, in virtual time.
type arrivals struct {
	mu    sync.Mutex
	times []time.Time
}

func (a *arrivals) add() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.times = append(a.times, time.Now())
	return len(a.times)
}

// gaps returns the time between consecutive arrivals.
func (a *arrivals) gaps() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(a.times); i++ {
		out = append(out, a.times[i].Sub(a.times[i-1]))
	}
	return out
}

func (a *arrivals) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.times)
}

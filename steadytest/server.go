package steadytest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
)

// A Server is a [Handler] listening on 127.0.0.1 at a random port, in the
// manner of [httptest.Server].
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT, with no trailing slash.
	// The collection is at URL + ItemsPath.
	URL string

	h  *Handler
	ts *httptest.Server
}

// NewServer starts a server with opt. Like [httptest.NewServer] it is meant
// for tests and panics when it cannot start, or when opt is invalid (see
// [ServerOptions.Validate]; [NewHandler] returns the error instead).
func NewServer(opt ServerOptions) *Server {
	h, err := NewHandler(opt)
	if err != nil {
		panic(err)
	}
	ts := httptest.NewUnstartedServer(h)
	// Aborted and reset responses are the point of this server, not news.
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Start()
	return &Server{URL: ts.URL, h: h, ts: ts}
}

// Handler returns the server's handler.
func (s *Server) Handler() *Handler { return s.h }

// Client returns an HTTP client for the server whose idle connections are
// closed by [Server.Close].
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Requests returns a copy of the request log, in arrival order.
func (s *Server) Requests() []Request { return s.h.Requests() }

// Close releases every hung or stalled request, then shuts the server down
// and waits for its handlers to return. No goroutine of the server outlives
// it.
func (s *Server) Close() {
	// Order matters: httptest waits for active handlers, so the ones
	// waiting on purpose must be released first.
	s.h.Close()
	s.ts.Close()
}

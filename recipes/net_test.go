package recipes_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/steadyhttp/steady/internal/wiretest"
)

// tlsServer serves h over https on loopback (or on l, an in-memory
// listener, inside a synctest bubble), watched by the key watch, until the
// test ends. Its transport reaches it under any host name, so an SDK can
// talk to api.github.com as it does in production: every dial goes to the
// server, whose certificate is verified as httptest's own name.
func tlsServer(t *testing.T, h http.Handler, l net.Listener) (*httptest.Server, *http.Transport) {
	t.Helper()
	srv := httptest.NewUnstartedServer(wiretest.For(t).Handler(h))
	if l != nil {
		srv.Listener.Close()
		srv.Listener = l
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
	}
	if p, ok := l.(*pipeListener); ok {
		dial = p.dial
	}
	tr := &http.Transport{DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "example.com"}}
	t.Cleanup(tr.CloseIdleConnections)
	return srv, tr
}

// pipeListener is an in-memory listener: inside a synctest bubble a
// goroutine blocked on it, or on one of its connections, is durably
// blocked, where one blocked on a socket is not, so virtual time can pass.
type pipeListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, errors.New("pipe listener closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "127.0.0.1:443" }

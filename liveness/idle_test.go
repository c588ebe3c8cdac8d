package liveness_test

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/liveness"
)

// silent blocks every Read until it is closed, as a net/http body on a
// silent connection does.
type silent struct {
	once   sync.Once
	closed chan struct{}
}

func (s *silent) Read([]byte) (int, error) {
	<-s.closed
	return 0, errors.New("read on a closed body")
}

func (s *silent) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// A read that waits idle fails after exactly the bound with a timeout,
// having closed the body under it; reads that keep arriving within the
// bound are never cut; no bound leaves the body as it is.
func TestBoundReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &silent{closed: make(chan struct{})}
		body := liveness.BoundReads(s, 5*time.Second)
		start := time.Now()
		_, err := body.Read(make([]byte, 8))
		var rt *liveness.ReadTimeoutError
		if !errors.As(err, &rt) || rt.After != 5*time.Second || time.Since(start) != 5*time.Second {
			t.Fatalf("read ended with %v after %v; want a ReadTimeoutError after 5s", err, time.Since(start))
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%v is not a timeout to errors.As(net.Error)", err)
		}
		select {
		case <-s.closed:
		default:
			t.Error("the silent body was not closed")
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r, w := io.Pipe()
		go func() {
			for range 5 {
				time.Sleep(4 * time.Second)
				w.Write([]byte("x"))
			}
			w.Close()
		}()
		got, err := io.ReadAll(liveness.BoundReads(r, 5*time.Second))
		if err != nil || string(got) != "xxxxx" {
			t.Fatalf("a byte every 4s with a 5s bound: %q, %v; want all 5", got, err)
		}
	})
	body := io.NopCloser(strings.NewReader("x"))
	if got := liveness.BoundReads(body, 0); got != body {
		t.Errorf("no bound wrapped the body in a %T", got)
	}
}

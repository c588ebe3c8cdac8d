package steadytest_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady/steadytest"
	"go.uber.org/goleak"
)

// TestCloseDuringHangOrStallLeaksNothing uses real sockets: the point is
// that httptest's Close, which waits for active handlers, returns.
func TestCloseDuringHangOrStallLeaksNothing(t *testing.T) {
	cases := []struct {
		name  string
		fault steadytest.Fault
	}{
		{"hang", steadytest.Fault{Kind: steadytest.Hang}},
		{"stall", steadytest.Fault{Kind: steadytest.Stall}},
		{"drip", steadytest.Fault{Kind: steadytest.Drip, Chunk: 1, Every: time.Hour}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			arrived := make(chan struct{})
			s := steadytest.NewServer(steadytest.ServerOptions{
				Faults:    steadytest.Faults{Script: map[int]steadytest.Fault{1: c.fault}},
				OnRequest: func(steadytest.Request) { close(arrived) },
			})
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			failed := make(chan error, 1)
			go func() {
				resp, err := (&http.Client{Transport: tr}).Get(s.URL + steadytest.ItemsPath)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				failed <- err
			}()
			<-arrived
			closed := make(chan struct{})
			go func() {
				s.Close()
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(10 * time.Second): // a guard, not a measurement
				t.Fatal("Close did not return while a request was held")
			}
			if err := <-failed; err == nil {
				t.Error("the held request completed as if whole")
			}
		})
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	s := steadytest.NewServer(steadytest.ServerOptions{})
	s.Close()
	s.Close()
	s.Handler().Close()
}

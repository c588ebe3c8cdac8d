package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/retry"
)

// A re-send after a break is a re-send of the call, not a new request: it
// waits the backoff of the attempt it is (none when AtOnce), reports
// RetryScheduled with the layer's reason and no RequestStarted, counts the
// break in Failed, and ends retrying as the loop would, sending nothing.
func TestResend(t *testing.T) {
	p := func(ev *resendEvents) retry.Policy {
		return retry.Policy{MaxAttempts: 3, InitialBackoff: time.Second, Rand: constRand(0.5), Reporter: ev}
	}
	t.Run("re-sent after the backoff", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := &script{steps: []func(*http.Request) (*http.Response, error){status(206)}}
			ev := &resendEvents{}
			b := &retry.Break{Err: io.ErrUnexpectedEOF, Reason: "resume at byte 7", Bytes: 7}
			start := time.Now()
			resp, out, err := retry.New(s, p(ev)).Resend(get(t.Context(), api), b)
			if err != nil || resp.StatusCode != 206 {
				t.Fatalf("Resend: %v", err)
			}
			resp.Body.Close()
			if took := time.Since(start); took != 500*time.Millisecond || out.Waited != took || out.Attempts != 1 {
				t.Errorf("took %v, outcome %+v; want the first backoff of 0.5s and one attempt", took, out)
			}
			if b.Failed != 1 {
				t.Errorf("Failed = %d, want the break counted", b.Failed)
			}
			if got := ev.kinds(); fmt.Sprint(got) != fmt.Sprint([]event.Kind{event.RetryScheduled, event.RequestFinished}) {
				t.Errorf("events %v; want RetryScheduled, RequestFinished: a re-send is not a new request", got)
			}
			if r := ev.reasons(event.RetryScheduled); len(r) != 1 || r[0] != "resume at byte 7" {
				t.Errorf("RetryScheduled reasons %q", r)
			}
		})
	})
	t.Run("at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := &script{steps: []func(*http.Request) (*http.Response, error){status(206)}}
			start := time.Now()
			resp, _, err := retry.New(s, p(&resendEvents{})).Resend(get(t.Context(), api), &retry.Break{Err: io.ErrUnexpectedEOF, AtOnce: true})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if took := time.Since(start); took != 0 {
				t.Errorf("waited %v; AtOnce sends the first re-send without a backoff", took)
			}
		})
	})
	t.Run("stops as the loop would", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := &script{steps: []func(*http.Request) (*http.Response, error){status(206)}}
			tr := retry.New(s, p(&resendEvents{}))
			b := &retry.Break{Err: io.ErrUnexpectedEOF, Failed: 2}
			_, out, err := tr.Resend(get(t.Context(), api), b)
			if !errors.Is(err, retry.ErrExhausted) || !errors.Is(err, io.ErrUnexpectedEOF) || out.Stop != retry.ErrExhausted {
				t.Errorf("the third failure of three: %v, outcome %+v; want ErrExhausted with the break", err, out)
			}
			permanent := errors.New("permanent")
			req := get(context.Background(), "ftp://api.example.gov/x") // a scheme no attempt can send
			if _, _, err := tr.Resend(req, &retry.Break{Err: permanent}); err != permanent {
				t.Errorf("a failure no re-send survives came back as %v", err)
			}
			if n := s.attempts(); n != 0 {
				t.Errorf("%d attempts sent; want none", n)
			}
		})
	})
}

// PolicyFor is the policy a request is sent under: its overrides applied,
// the zero fields defaulted.
func ExampleTransport_PolicyFor() {
	tr := retry.New(nil, retry.Policy{ReadTimeout: 5 * time.Second})
	ctx := retry.WithMaxAttempts(context.Background(), 2)
	p, err := tr.PolicyFor(ctx)
	fmt.Println(p.MaxAttempts, p.ReadTimeout, p.StallTimeout, err)
	// Output: 2 5s 1m0s <nil>
}

// resendEvents collects what a transport reports.
type resendEvents struct {
	mu sync.Mutex
	es []event.Event
}

func (e *resendEvents) Report(ev event.Event) {
	e.mu.Lock()
	e.es = append(e.es, ev)
	e.mu.Unlock()
}

func (e *resendEvents) kinds() []event.Kind {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []event.Kind
	for _, ev := range e.es {
		out = append(out, ev.Kind)
	}
	return out
}

func (e *resendEvents) reasons(k event.Kind) []string {
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

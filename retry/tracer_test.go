package retry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

type (
	callerKey  struct{}
	attemptKey struct{}
)

// tracerFunc is a event.Tracer that records what it is told and gives
// every attempt a context naming its number.
type tracerFunc struct {
	mu      sync.Mutex
	started []event.Event
	events  []event.Event
}

func (t *tracerFunc) Report(e event.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, e)
}

func (t *tracerFunc) StartAttempt(e event.Event) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started = append(t.started, e)
	return context.WithValue(e.Context, attemptKey{}, e.Attempt)
}

func attemptOf(ctx context.Context) int {
	if ctx == nil {
		return -1
	}
	n, _ := ctx.Value(attemptKey{}).(int)
	return n
}

// TestTracerContextReachesAttempts: each attempt is sent with the context
// the tracer made for it, derived from the caller's, and the attempt's own
// events carry that context, while the request's events carry the
// caller's; the caller's request keeps its own.
func TestTracerContextReachesAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []int
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(503), status(503), status(200)}}
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Context().Value(callerKey{}) != "caller" {
				t.Errorf("attempt context lost the caller's values")
			}
			seen = append(seen, attemptOf(r.Context()))
			return s.RoundTrip(r)
		})
		tr := &tracerFunc{}
		rt := retry.New(inner, retry.Policy{Rand: constRand(0), Reporter: tr})
		ctx := context.WithValue(t.Context(), callerKey{}, "caller")
		req := get(ctx, api+"?api_key=SECRET123")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if req.Context() != ctx {
			t.Error("the caller's request was given another context")
		}
		if got, want := seen, []int{1, 2, 3}; !slices.Equal(got, want) {
			t.Errorf("attempts sent with contexts of attempts %v, want %v", got, want)
		}
		for i, e := range tr.started {
			if e.Kind != event.AttemptStarted || e.Attempt != i+1 || e.MaxAttempts != 5 || e.Method != "GET" {
				t.Errorf("StartAttempt %d got %+v", i, e)
			}
			if attemptOf(e.Context) != 0 || e.Context.Value(callerKey{}) != "caller" {
				t.Errorf("StartAttempt %d: context is not the caller's", i)
			}
			if strings.Contains(e.URL, "SECRET123") {
				t.Errorf("StartAttempt %d: URL %q not redacted", i, e.URL)
			}
		}
		type ev struct {
			kind    event.Kind
			attempt int
			ctxOf   int
		}
		want := []ev{
			{event.RequestStarted, 0, 0},
			{event.RetryScheduled, 1, 1},
			{event.RetryScheduled, 2, 2},
			{event.RequestFinished, 3, 3},
		}
		if len(tr.events) != len(want) {
			t.Fatalf("got %d events, want %d: %+v", len(tr.events), len(want), tr.events)
		}
		for i, w := range want {
			e := tr.events[i]
			if got := (ev{e.Kind, e.Attempt, attemptOf(e.Context)}); got != w {
				t.Errorf("event %d = %+v, want %+v", i, got, w)
			}
			if e.Kind == event.AttemptStarted {
				t.Errorf("Report received an AttemptStarted event")
			}
		}
	})
}

// TestTracerAttemptSeesCancellation: the attempt's context is the
// tracer's, so the caller's cancellation must still reach the attempt and
// end the call unwrapped.
func TestTracerAttemptSeesCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		s := &script{steps: []func(*http.Request) (*http.Response, error){slow(time.Hour, status(200))}}
		tr := &tracerFunc{}
		rt := retry.New(s, retry.Policy{Reporter: tr})
		time.AfterFunc(time.Second, cancel)
		_, err := rt.RoundTrip(get(ctx, api))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		last := tr.events[len(tr.events)-1]
		if last.Kind != event.Stopped || last.Stop != context.Canceled || attemptOf(last.Context) != 1 {
			t.Errorf("last event %+v (attempt context %d), want the attempt's Stopped with context.Canceled",
				last, attemptOf(last.Context))
		}
	})
}

// TestStoppedCarriesItsReason: every Stopped event names its stop reason
// as the sentinel itself, and every event carries the caller's context.
func TestStoppedCarriesItsReason(t *testing.T) {
	cases := []struct {
		name   string
		steps  []func(*http.Request) (*http.Response, error)
		policy retry.Policy
		want   error
	}{
		{"exhausted", []func(*http.Request) (*http.Response, error){status(503)}, retry.Policy{MaxAttempts: 2}, retry.ErrExhausted},
		{"retry-after above the cap", []func(*http.Request) (*http.Response, error){status(503, "Retry-After", "3600")}, retry.Policy{}, retry.ErrRetryAfter},
		{"budget", []func(*http.Request) (*http.Response, error){status(503)}, retry.Policy{Budget: &budget.Budget{MinPerSecond: -1, MaxTokens: 0.01}}, retry.ErrBudget},
		{"not retryable", []func(*http.Request) (*http.Response, error){status(503)}, retry.Policy{}, retry.ErrNotRetryable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var events []event.Event
				c.policy.Rand = constRand(0)
				c.policy.Reporter = event.ReporterFunc(func(e event.Event) { events = append(events, e) })
				rt := retry.New(&script{steps: c.steps}, c.policy)
				ctx := context.WithValue(t.Context(), callerKey{}, "caller")
				req := get(ctx, api)
				if c.want == retry.ErrNotRetryable {
					req.Method = http.MethodPost
				}
				resp, err := rt.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				last := events[len(events)-1]
				if last.Kind != event.Stopped || !errors.Is(last.Stop, c.want) || !strings.HasPrefix(last.Reason, c.want.Error()) {
					t.Errorf("last event %+v, want Stopped by %v", last, c.want)
				}
				for i, e := range events {
					if e.Context == nil || e.Context.Value(callerKey{}) != "caller" {
						t.Errorf("event %d (%v) does not carry the caller's context", i, e.Kind)
					}
				}
			})
		})
	}
}

// TestStoppedWhenBodyCannotBeReplayed: a re-send whose body cannot be
// produced again ends with a Stopped event on the attempt the tracer
// started, so no span is left open.
func TestStoppedWhenBodyCannotBeReplayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &tracerFunc{}
		rt := retry.New(&script{steps: []func(*http.Request) (*http.Response, error){status(503)}},
			retry.Policy{Rand: constRand(0), Reporter: tr})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, api, strings.NewReader("x"))
		req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("gone") }
		_, err := rt.RoundTrip(req)
		if !errors.Is(err, retry.ErrNotRetryable) {
			t.Fatalf("err = %v, want ErrNotRetryable", err)
		}
		last := tr.events[len(tr.events)-1]
		if last.Kind != event.Stopped || last.Stop != retry.ErrNotRetryable || attemptOf(last.Context) != 2 {
			t.Errorf("last event %+v (attempt context %d), want Stopped on attempt 2's context", last, attemptOf(last.Context))
		}
	})
}

// TestStoppedByPacingRefusal: a hold beyond MaxRetryAfter ends the call
// with a Stopped event naming ErrRateLimited and the hold.
func TestStoppedByPacingRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var events []event.Event
		rt := retry.New(&script{steps: []func(*http.Request) (*http.Response, error){status(200, "RateLimit", `"default";r=0;t=3600`)}},
			retry.Policy{Pacer: new(ratelimit.Pacer), Reporter: event.ReporterFunc(func(e event.Event) { events = append(events, e) })})
		resp, err := rt.RoundTrip(get(t.Context(), api))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		events = nil
		_, err = rt.RoundTrip(get(t.Context(), api))
		if !errors.Is(err, retry.ErrRateLimited) {
			t.Fatalf("err = %v, want ErrRateLimited", err)
		}
		last := events[len(events)-1]
		if last.Kind != event.Stopped || last.Stop != retry.ErrRateLimited || last.Wait != time.Hour {
			t.Errorf("last event %+v, want Stopped by ErrRateLimited with the hold", last)
		}
	})
}

// TestSuccessPathAllocations: a call without a reporter allocates nothing
// of its own, and a plain reporter costs only the redacted URL, computed
// once for all the call's events: the events' Context and Stop fields are
// free.
func TestSuccessPathAllocations(t *testing.T) {
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody}
	inner := roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	req := get(context.Background(), api+"?page=2")
	for _, c := range []struct {
		name string
		rep  event.Reporter
		want float64
	}{
		{"no reporter", nil, 0},
		{"a plain reporter", event.ReporterFunc(func(event.Event) {}), 1},
	} {
		rt := retry.New(inner, retry.Policy{Reporter: c.rep})
		got := testing.AllocsPerRun(100, func() {
			if _, err := rt.RoundTrip(req); err != nil {
				t.Fatal(err)
			}
		})
		if got != c.want {
			t.Errorf("%s: %v allocations a call, want %v", c.name, got, c.want)
		}
	}
}

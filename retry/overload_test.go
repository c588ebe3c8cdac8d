package retry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/retry"
)

// The host the breaker keys api's requests by: lower case, with the port.
const apiHost = "api.example.gov:443"

func newOverload(t *testing.T, cfg breaker.Config) *breaker.Breaker {
	t.Helper()
	if cfg.Rand == nil {
		cfg.Rand = func() float64 { return 0.999999 } // the throttle never draws a rejection
	}
	b, err := breaker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// call makes one request through tr and returns its outcome, closing the
// response it got.
func call(t *testing.T, tr *retry.Transport, url string) (*http.Response, retry.Outcome, error) {
	t.Helper()
	ctx, out := retry.WithOutcome(t.Context())
	resp, err := tr.RoundTrip(get(ctx, url))
	if resp != nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, *out, err
}

// waitOf reads the wait a refusal carries, through the interface fan-out
// and the command read.
func waitOf(err error) time.Duration {
	var h interface{ RetryAfter() time.Duration }
	if errors.As(err, &h) {
		return h.RetryAfter()
	}
	return -1
}

// An outage: one vote a call opens the circuit; the call whose vote opened
// it keeps its last 503 (the refused re-send ends it with the response in
// hand); the calls after it fail fast without sending, with ErrOverload,
// the breaker's ErrOpen and the wait; after the open delay one probe goes,
// and its success closes the circuit.
func TestOverloadOutageFailsFastThenRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var down atomic.Bool
		down.Store(true)
		var sent atomic.Int32
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			if down.Load() {
				return respond(r, 503, nil, "down"), nil
			}
			return respond(r, 200, nil, "ok"), nil
		})
		b := newOverload(t, breaker.Config{MinRequests: 2})
		tr := retry.New(inner, retry.Policy{Overload: b, Rand: constRand(0.5)})

		_, out, err := call(t, tr, api)
		if err != nil || out.Attempts != 5 || out.Stop != retry.ErrExhausted {
			t.Fatalf("first call: %v, %+v; want 5 attempts exhausted (its re-sends do not vote)", err, out)
		}
		resp, out, err := call(t, tr, api)
		if err != nil || resp.StatusCode != 503 || out.Attempts != 1 {
			t.Fatalf("second call: %v, %+v; want its 503 back after 1 attempt", err, out)
		}
		if !errors.Is(out.Stop, retry.ErrOverload) || !errors.Is(out.Stop, breaker.ErrOpen) {
			t.Errorf("second call stopped for %v, want ErrOverload and ErrOpen", out.Stop)
		}
		before := sent.Load()
		time.Sleep(time.Second)
		_, out, err = call(t, tr, api)
		if got := sent.Load(); got != before {
			t.Errorf("a call to an open circuit sent %d attempts, want none", got-before)
		}
		var re *retry.Error
		if !errors.As(err, &re) || !errors.Is(err, retry.ErrOverload) || !errors.Is(err, breaker.ErrOpen) || re.Attempts != 0 {
			t.Fatalf("fast failure = %v, want a *retry.Error for ErrOverload and ErrOpen after 0 attempts", err)
		}
		if got, want := waitOf(err), 4*time.Second; got != want {
			t.Errorf("RetryAfter = %v, want %v (the open delay left)", got, want)
		}
		if !retry.Transient(err) || !errors.Is(out.Stop, breaker.ErrOpen) {
			t.Errorf("Transient = %v, Outcome.Stop = %v; want a transient refusal", retry.Transient(err), out.Stop)
		}

		down.Store(false)
		time.Sleep(5 * time.Second)
		if _, out, err := call(t, tr, api); err != nil || out.Attempts != 1 || out.Stop != nil {
			t.Fatalf("probe after the delay: %v, %+v; want a plain success", err, out)
		}
		if got := b.State(apiHost, ""); got != breaker.Closed {
			t.Errorf("state after the probe's success = %v, want closed", got)
		}
		if _, _, err := call(t, tr, api); err != nil {
			t.Errorf("call after recovery: %v", err)
		}
	})
}

// What counts: only a host that is not serving (a 5xx the policy re-sends,
// a timeout, a refused connection); a reset mid-answer does not
// open the circuit; a 500 the policy does not re-send, a 404 and 429s of
// either kind never do. A headerless 429 cuts the host's limit; a 429 with
// quota fields is the pacer's and leaves it, as a 403 rate limit (which
// has quota fields by definition) does; a 403 without them is a refusal.
func TestOverloadClassification(t *testing.T) {
	reset := &netOpError{syscall.ECONNRESET}
	tests := []struct {
		name  string
		step  func(*http.Request) (*http.Response, error)
		opens bool
		limit int
	}{
		{"503", status(503), true, 8},
		{"reset", fail(reset), false, 8},
		{"refused", fail(&netOpError{syscall.ECONNREFUSED}), true, 8},
		{"timeout", fail(timeoutError{}), true, 8},
		{"500 not re-sent", status(500), false, 8},
		{"404", status(404), false, 8},
		{"429 without fields", status(429), false, 1},
		{"429 with Retry-After only", status(429, "Retry-After", "1"), false, 1},
		{"429 with quota fields", status(429, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1"), false, 8},
		{"403 with Retry-After alone, a refusal (ADR 293)", status(403, "Retry-After", "1"), false, 8},
		{"403 rate limit with quota fields", status(403, "Retry-After", "1", "X-RateLimit-Remaining", "0"), false, 8},
		{"200", status(200), false, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newOverload(t, breaker.Config{MinRequests: 5, MaxConcurrency: 8})
				tr := retry.New(roundTripFunc(tt.step), retry.Policy{Overload: b, MaxAttempts: 1})
				for range 40 {
					call(t, tr, api)
				}
				if opened := b.State(apiHost, "") == breaker.Open; opened != tt.opens {
					t.Errorf("open after 40 calls = %v, want %v", opened, tt.opens)
				}
				if got, _ := b.Limit(apiHost, ""); got != tt.limit {
					t.Errorf("limit after 40 calls = %d, want %d", got, tt.limit)
				}
			})
		})
	}
}

type netOpError struct{ err error }

// timeoutError is a timeout in the net.Error sense.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func (e *netOpError) Error() string { return "read: " + e.err.Error() }
func (e *netOpError) Unwrap() error { return e.err }

// Every ticket is closed: a half-open probe whose caller gives up frees its
// place, and the next call is the probe.
func TestOverloadAbandonedProbeFreesItsPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hang atomic.Bool
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if hang.Load() {
				<-r.Context().Done()
				return nil, r.Context().Err()
			}
			return respond(r, 503, nil, ""), nil
		})
		b := newOverload(t, breaker.Config{MinRequests: 1})
		tr := retry.New(inner, retry.Policy{Overload: b, MaxAttempts: 1})
		call(t, tr, api) // opens
		time.Sleep(5 * time.Second)
		hang.Store(true)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() {
			_, err := tr.RoundTrip(get(ctx, api))
			done <- err
		}()
		synctest.Wait() // the probe is in flight
		if _, _, err := call(t, tr, api); !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("second call while the probe is out: %v, want ErrOpen", err)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled probe: %v, want context.Canceled unwrapped", err)
		}
		hang.Store(false)
		if _, out, err := call(t, tr, api); err != nil || out.Attempts != 1 {
			t.Fatalf("call after the abandoned probe: %v, %+v; want it admitted as the probe", err, out)
		}
	})
}

// A re-send whose circuit opened while it waited out its backoff is
// refused when it would be sent: the call ends with ErrOverload, the last
// status and the last cause.
func TestOverloadResendRefusedAfterItsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newOverload(t, breaker.Config{MinRequests: 2})
		slowFail := slow(time.Second, status(503))
		tr := retry.New(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/other" {
				return slowFail(r)
			}
			return nil, &netOpError{syscall.ECONNREFUSED}
		}), retry.Policy{Overload: b, InitialBackoff: 10 * time.Second, Rand: constRand(0.5)})
		// This call's first attempt fails at once, and it waits 5s to re-send;
		// the other's fails at 1s, the second vote, and opens the circuit.
		go call(t, tr, "https://api.example.gov/other")
		_, out, err := call(t, tr, api)
		var re *retry.Error
		if !errors.As(err, &re) || !errors.Is(err, retry.ErrOverload) || re.Attempts != 1 || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("err = %v, want ErrOverload after 1 attempt, with the refusal as its cause", err)
		}
		if out.Attempts != 1 || !errors.Is(out.Stop, breaker.ErrOpen) || !errors.Is(out.Cause, syscall.ECONNREFUSED) {
			t.Errorf("outcome = %+v", out)
		}
		synctest.Wait()
	})
}

// fixedWindow is a limiter as express-rate-limit's memory store keeps one:
// a window of limit requests opened by the first request after the last
// one ended, each refused request answered with a bare 429.
type fixedWindow struct {
	mu            sync.Mutex
	limit         int
	period        time.Duration
	start         time.Time
	hits          int
	served, moved int
}

func (w *fixedWindow) admit(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.start.IsZero() || !now.Before(w.start.Add(w.period)) {
		w.start, w.hits = now, 0
	}
	w.hits++
	if w.hits > w.limit {
		w.moved++
		return false
	}
	w.served++
	return true
}

// A sequential caller behind a fixed window that answers bare 429s, with
// the default attempts: the breaker learns the window from the first run
// of 429s, its probes are not counted as attempts, and the calls after are
// held into the next window (told as Waiting events) instead of meeting
// its 429s. Every call passes, within 1.25x the least time the window
// allows, and later windows draw at most one 429 each (the additive probe
// of one more send).
func TestOverloadLearnsTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fixedWindow{limit: 10, period: time.Second}
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			time.Sleep(2 * time.Millisecond)
			if !w.admit(time.Now()) {
				return respond(r, 429, nil, ""), nil
			}
			return respond(r, 200, nil, ""), nil
		})
		var holds int
		rep := event.ReporterFunc(func(e event.Event) {
			if e.Kind == event.Waiting {
				holds++
			}
		})
		b := newOverload(t, breaker.Config{})
		tr := retry.New(inner, retry.Policy{Overload: b, Reporter: rep})
		const calls = 61 // six windows, and the first request of a seventh
		start := time.Now()
		var firstWindow int
		for i := range calls {
			if _, out, err := call(t, tr, api); err != nil || out.Status != 200 {
				t.Fatalf("call %d: %v, status %d after %d attempts", i, err, out.Status, out.Attempts)
			}
			if i == 19 {
				firstWindow = w.moved
			}
		}
		floor := 6 * time.Second
		elapsed := time.Since(start)
		t.Logf("%d calls in %v (%.3fx the floor %v): %d 429s, %d of them learning the window; %d holds", calls, elapsed,
			elapsed.Seconds()/floor.Seconds(), floor, w.moved, firstWindow, holds)
		if elapsed > floor*125/100 {
			t.Errorf("%d calls took %v, over 1.25x the floor %v", calls, elapsed, floor)
		}
		if later := w.moved - firstWindow; later > 5 {
			t.Errorf("%d 429s after the window was learned, want at most one a window", later)
		}
		if limit, period := b.Quota(apiHost, ""); limit < 10 || limit > 11 || period < time.Second || period > 1250*time.Millisecond {
			t.Errorf("learned %d per %v, want 10 (or 11, probing) per 1s to 1.25s", limit, period)
		}
		if holds == 0 {
			t.Error("no Waiting event told the holds")
		}
	})
}

// A learned window's hold is a wait like a pacing hold: a deadline it
// cannot meet refuses at once with ErrDeadline, one above MaxRetryAfter
// with ErrRetryAfter, sending nothing.
func TestOverloadWindowHoldBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fixedWindow{limit: 2, period: 10 * time.Second}
		var sends int
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sends++
			if !w.admit(time.Now()) {
				return respond(r, 429, nil, ""), nil
			}
			return respond(r, 200, nil, ""), nil
		})
		b := newOverload(t, breaker.Config{})
		tr := retry.New(inner, retry.Policy{Overload: b, MaxAttempts: 1})
		for range 3 {
			call(t, tr, api)
		}
		time.Sleep(10 * time.Second) // the window reopens; the next call's probe learns it
		for range 2 {
			call(t, tr, api)
		}
		if limit, period := b.Quota(apiHost, ""); limit != 2 || period < 10*time.Second {
			t.Fatalf("learned %d per %v, want 2 per 10s", limit, period)
		}
		n := sends
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := tr.RoundTrip(get(ctx, api)); !errors.Is(err, retry.ErrDeadline) || sends != n {
			t.Errorf("err = %v after %d sends, want ErrDeadline with none", err, sends-n)
		}
		short := retry.New(inner, retry.Policy{Overload: b, MaxAttempts: 1, MaxRetryAfter: time.Second})
		if _, err := short.RoundTrip(get(t.Context(), api)); !errors.Is(err, retry.ErrRetryAfter) || sends != n {
			t.Errorf("err = %v after %d sends, want ErrRetryAfter with none", err, sends-n)
		}
	})
}

// A host that serves a run, then answers nothing but bare 429s: the probes
// of its window are not counted as attempts, but their waits are silence,
// so the stall budget ends the call, and it does not probe forever. A host
// that never served is re-sent on the policy's backoff and attempts
// (TestHostileRetryAfterPast).
func TestOverloadProbesEndAtTheStallBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sends, total int
		inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sends++
			total++
			if total <= 5 {
				return respond(r, 200, nil, ""), nil
			}
			return respond(r, 429, nil, ""), nil
		})
		b := newOverload(t, breaker.Config{})
		tr := retry.New(inner, retry.Policy{Overload: b, StallTimeout: 30 * time.Second})
		for range 5 {
			call(t, tr, api)
		}
		sends = 0
		start := time.Now()
		resp, out, err := call(t, tr, api)
		took := time.Since(start)
		t.Logf("%d sends in %v, stop %v", sends, took, out.Stop)
		if err != nil || resp == nil || resp.StatusCode != 429 || !errors.Is(out.Stop, retry.ErrStalled) {
			t.Fatalf("resp %v, err %v, stop %v; want the last 429 handed back, stopped by the stall budget", resp, err, out.Stop)
		}
		if took > 40*time.Second || sends > 60 {
			t.Errorf("%d sends over %v, want the stall budget of 30s to end it, with probes spaced wider as it goes", sends, took)
		}
	})
}

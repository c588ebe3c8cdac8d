package retry_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/retry"
)

const api = "https://api.example.gov/items"

// TestContractLastResponseReturned: when retries end on a retryable status,
// the last response comes back with a nil error and its body open, and every
// earlier body was drained and closed before the wait that followed it.
func TestContractLastResponseReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(503)}}
		tr := retry.New(s, retry.Policy{MaxAttempts: 3, Rand: constRand(0)})
		ctx, out := retry.WithOutcome(t.Context())
		resp, err := tr.RoundTrip(get(ctx, api))
		if err != nil {
			t.Fatalf("RoundTrip error = %v, want nil with the last response", err)
		}
		if resp.StatusCode != 503 {
			t.Fatalf("status = %d, want 503", resp.StatusCode)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil || string(body) != "Service Unavailable" {
			t.Fatalf("last body = %q, %v; want it open and whole", body, err)
		}
		resp.Body.Close()
		if s.attempts() != 3 {
			t.Fatalf("attempts = %d, want 3", s.attempts())
		}
		for i, r := range s.answered[:2] {
			drained, closed, at := r.Body.(*probeBody).state()
			if !drained || !closed {
				t.Errorf("attempt %d body: drained=%v closed=%v, want both", i+1, drained, closed)
			}
			if !at.Before(s.times[i+1]) {
				t.Errorf("attempt %d body closed at %v, not before the next attempt at %v", i+1, at, s.times[i+1])
			}
		}
		if out.Attempts != 3 || !errors.Is(out.Stop, retry.ErrExhausted) || out.Status != 503 {
			t.Errorf("outcome = %+v, want 3 attempts, ErrExhausted, 503", out)
		}
	})
}

func TestContractRequestNotMutated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(503), status(503), status(200)}}
		tr := retry.New(s, retry.Policy{Methods: []string{"GET", "POST"}, Rand: constRand(0)})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, api+"?q=1", strings.NewReader("payload"))
		req.Header.Set("Accept", "application/json")
		before := req.Header.Clone()
		ctx := req.Context()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(req.Header) != len(before) || req.Header.Get("Idempotency-Key") != "" {
			t.Errorf("caller's header changed: %v", req.Header)
		}
		if req.URL.String() != api+"?q=1" || req.Context() != ctx {
			t.Errorf("caller's URL or context changed")
		}
		for i, r := range s.reqs {
			if r == req {
				t.Errorf("attempt %d reused the caller's request", i+1)
			}
			if s.bodies[i] != "payload" {
				t.Errorf("attempt %d body = %q, want the replayed payload", i+1, s.bodies[i])
			}
		}
	})
}

func TestRetryAfterWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){
			status(429, "Retry-After", "2"), status(503, "Retry-After", "0"), status(200)}}
		tr := retry.New(s, retry.Policy{Rand: constRand(0.5)})
		resp, err := tr.RoundTrip(get(t.Context(), api))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if s.attempts() != 3 {
			t.Fatalf("attempts = %d, want 3", s.attempts())
		}
		// hint 2s + jitter 0.5 × a tenth of the hint
		if got := s.times[1].Sub(s.times[0]); got != 2100*time.Millisecond {
			t.Errorf("wait after Retry-After: 2 = %v, want 2.1s", got)
		}
		// hint 0 still waits its jitter (0.5 × 50ms): never a zero-delay re-send
		if got := s.times[2].Sub(s.times[1]); got != 25*time.Millisecond {
			t.Errorf("wait after Retry-After: 0 = %v, want 25ms", got)
		}
	})
}

func TestRetryAfterAboveCapStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(429, "Retry-After", "3600")}}
		var events []event.Event
		tr := retry.New(s, retry.Policy{Reporter: event.ReporterFunc(func(e event.Event) { events = append(events, e) })})
		ctx, out := retry.WithOutcome(t.Context())
		start := time.Now()
		resp, err := tr.RoundTrip(get(ctx, api))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 429 || s.attempts() != 1 || time.Since(start) != 0 {
			t.Fatalf("got %d after %d attempts and %v; want the 429 at once", resp.StatusCode, s.attempts(), time.Since(start))
		}
		if !errors.Is(out.Stop, retry.ErrRetryAfter) || out.RetryAfter != time.Hour {
			t.Errorf("outcome = %+v, want ErrRetryAfter with the 1h hint", out)
		}
		last := events[len(events)-1]
		if last.Kind != event.Stopped || !strings.Contains(last.Reason, "longer than MaxRetryAfter") {
			t.Errorf("last event = %+v, want a stop that says why", last)
		}
	})
}

func TestBackoffWaitsAreExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(502)}}
		tr := retry.New(s, retry.Policy{MaxAttempts: 5, StallTimeout: -1, Rand: constRand(0)})
		resp, err := tr.RoundTrip(get(t.Context(), api))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}
		for i, w := range want {
			if got := s.times[i+1].Sub(s.times[i]); got != w {
				t.Errorf("wait before attempt %d = %v, want %v", i+2, got, w)
			}
		}
	})
}

func TestNonRetryableStatusReturnedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, code := range []int{400, 401, 404, 409, 500} {
			s := &script{steps: []func(*http.Request) (*http.Response, error){status(code)}}
			resp, err := retry.New(s, retry.Policy{}).RoundTrip(get(t.Context(), api))
			if err != nil || resp.StatusCode != code || s.attempts() != 1 {
				t.Errorf("%d: got %v, %v after %d attempts; want it returned at once", code, resp, err, s.attempts())
			}
			resp.Body.Close()
		}
		// A policy for query interfaces re-sends the 500.
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(500), status(200)}}
		resp, err := retry.New(s, retry.Policy{RetryStatus: retry.AnyServerError}).RoundTrip(get(t.Context(), api))
		if err != nil || resp.StatusCode != 200 || s.attempts() != 2 {
			t.Errorf("AnyServerError: got %v, %v after %d attempts", resp, err, s.attempts())
		}
		resp.Body.Close()
	})
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassification(t *testing.T) {
	dial := func(errno error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: errno}}
	}
	read := func(errno error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: errno}}
	}
	cases := []struct {
		name     string
		err      error
		url      string
		header   http.Header
		attempts int
	}{
		{"refused", dial(syscall.ECONNREFUSED), api, nil, 3},
		{"reset", read(syscall.ECONNRESET), api, nil, 3},
		{"timeout", &net.OpError{Op: "read", Err: timeoutErr{}}, api, nil, 3},
		{"unexpected EOF", io.ErrUnexpectedEOF, api, nil, 3},
		{"wrapped unexpected EOF", errors.Join(errors.New("reading"), io.ErrUnexpectedEOF), api, nil, 3},
		{"temporary DNS", &net.DNSError{Err: "server misbehaving", Name: "api.example.gov", IsTemporary: true}, api, nil, 3},
		{"unknown transport failure (e.g. an HTTP/2 stream reset)", errors.New("stream error: stream ID 3; INTERNAL_ERROR"), api, nil, 3},
		{"DNS not found", &net.DNSError{Err: "no such host", Name: "nope.example", IsNotFound: true}, api, nil, 1},
		{"unknown authority", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, api, nil, 1},
		{"bare unknown authority", x509.UnknownAuthorityError{}, api, nil, 1},
		{"hostname mismatch", x509.HostnameError{Host: "x"}, api, nil, 1},
		{"unsupported scheme", errors.New("unsupported protocol scheme"), "ftp://api.example.gov/x", nil, 1},
		{"malformed header", errors.New("invalid header field value"), api, http.Header{"X-Bad": {"a\r\nb"}}, 1},
		{"malformed header name", errors.New("invalid header field name"), api, http.Header{"Bad Name": {"a"}}, 1},
		{"no host", errors.New("no Host in request URL"), "https:///x", nil, 1},
		{"body too large", &liveness.BodyTooLargeError{Limit: 10}, api, nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{steps: []func(*http.Request) (*http.Response, error){fail(c.err)}}
				req := get(t.Context(), c.url)
				for k, v := range c.header {
					req.Header[k] = v
				}
				resp, err := retry.New(s, retry.Policy{MaxAttempts: 3, Rand: constRand(0)}).RoundTrip(req)
				if resp != nil {
					t.Fatalf("got a response with a failure")
				}
				if s.attempts() != c.attempts {
					t.Errorf("attempts = %d, want %d (err %v)", s.attempts(), c.attempts, err)
				}
				var re *retry.Error
				if !errors.As(err, &re) || re.Attempts != c.attempts {
					t.Fatalf("err = %v, want a *retry.Error with %d attempts", err, c.attempts)
				}
				wantReason := retry.ErrExhausted
				if c.attempts == 1 {
					wantReason = retry.ErrNotRetryable
				}
				if !errors.Is(err, wantReason) || !errors.Is(err, c.err) {
					t.Errorf("err = %v; want it to match %v and wrap the cause", err, wantReason)
				}
			})
		})
	}
}

func TestMethods(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	cases := []struct {
		name     string
		method   string
		key      string
		policy   []string
		step     func(*http.Request) (*http.Response, error)
		attempts int
		genKey   bool
	}{
		{"POST is sent once", "POST", "", nil, status(503), 1, false},
		{"PATCH is sent once", "PATCH", "", nil, status(503), 1, false},
		{"POST with Idempotency-Key is re-sent", "POST", "caller-key-1", nil, status(503), 3, false},
		{"POST opted in by policy gets one generated key", "POST", "", []string{"GET", "post"}, status(503), 3, true},
		{"POST opted in keeps the caller's key", "POST", "caller-key-2", []string{"POST"}, status(503), 3, false},
		{"PUT the policy leaves out is sent once", "PUT", "", []string{"GET"}, status(503), 1, false},
		{"PUT the policy leaves out is re-sent with a key", "PUT", "caller-key-3", []string{"GET"}, status(503), 3, false},
		{"GET never gets a generated key", "GET", "", []string{"GET", "POST"}, status(503), 3, false},
		{"PUT is idempotent", "PUT", "", nil, status(503), 3, false},
		{"DELETE is idempotent", "DELETE", "", nil, status(503), 3, false},
		{"POST refused before any byte left is re-sent", "POST", "", nil, fail(refused), 3, false},
		{"POST reset mid-flight is not", "POST", "", nil, fail(reset), 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{steps: []func(*http.Request) (*http.Response, error){c.step}}
				req, _ := http.NewRequestWithContext(t.Context(), c.method, api, bytes.NewReader([]byte(`{"a":1}`)))
				if c.key != "" {
					req.Header.Set("Idempotency-Key", c.key)
				}
				resp, err := retry.New(s, retry.Policy{MaxAttempts: 3, Methods: c.policy, Rand: constRand(0)}).RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				if s.attempts() != c.attempts {
					t.Fatalf("attempts = %d, want %d (err %v)", s.attempts(), c.attempts, err)
				}
				if c.attempts == 1 {
					if err != nil && !errors.Is(err, retry.ErrNotRetryable) {
						t.Errorf("err = %v, want ErrNotRetryable", err)
					}
				}
				first := s.reqs[0].Header.Get("Idempotency-Key")
				for i, r := range s.reqs {
					if got := r.Header.Get("Idempotency-Key"); got != first {
						t.Errorf("attempt %d key %q differs from the first %q", i+1, got, first)
					}
					if s.bodies[i] != `{"a":1}` {
						t.Errorf("attempt %d body %q", i+1, s.bodies[i])
					}
				}
				if c.key != "" && first != c.key {
					t.Errorf("key = %q, want the caller's %q", first, c.key)
				}
				if c.genKey && (len(first) != 32 || strings.Trim(first, "0123456789abcdef") != "") {
					t.Errorf("generated key %q, want 32 hex digits", first)
				}
				if !c.genKey && c.key == "" && first != "" {
					t.Errorf("a key %q was added unasked", first)
				}
			})
		})
	}
}

func TestBodyWithoutGetBodyIsSentOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(503)}}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, api, io.NopCloser(strings.NewReader("x")))
		req.GetBody = nil
		var stops []string
		tr := retry.New(s, retry.Policy{Reporter: event.ReporterFunc(func(e event.Event) {
			if e.Kind == event.Stopped {
				stops = append(stops, e.Reason)
			}
		})})
		resp, err := tr.RoundTrip(req)
		if err != nil || s.attempts() != 1 {
			t.Fatalf("got %v after %d attempts, want the 503 after one", err, s.attempts())
		}
		resp.Body.Close()
		if len(stops) != 1 || !strings.Contains(stops[0], "cannot be replayed") {
			t.Errorf("stop events = %q, want the reason observable", stops)
		}
	})
}

// The four stall cases of the issue, in virtual time.
func TestStallBudget(t *testing.T) {
	cases := []struct {
		name     string
		step     func(*http.Request) (*http.Response, error)
		policy   retry.Policy
		attempts int
		stop     error
		elapsed  time.Duration // 0: not checked
	}{
		{"every attempt takes 100s and fails with 503",
			slow(100*time.Second, status(503)),
			retry.Policy{MaxAttempts: 5, StallTimeout: 60 * time.Second, Rand: constRand(0.5)},
			2, retry.ErrStalled, 0},
		{"every attempt answers 429 Retry-After 30 at once",
			status(429, "Retry-After", "30"),
			retry.Policy{MaxAttempts: 5, StallTimeout: 60 * time.Second, MaxRetryAfter: 60 * time.Second, Rand: constRand(0)},
			5, retry.ErrExhausted, 4 * 31 * time.Second},
		{"every attempt takes 0.4s and answers 504",
			slow(400*time.Millisecond, status(504)),
			retry.Policy{MaxAttempts: 5, StallTimeout: time.Second, InitialBackoff: time.Millisecond, Rand: constRand(0.999)},
			3, retry.ErrStalled, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{steps: []func(*http.Request) (*http.Response, error){c.step}}
				ctx, out := retry.WithOutcome(t.Context())
				start := time.Now()
				resp, err := retry.New(s, c.policy).RoundTrip(get(ctx, api))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if s.attempts() != c.attempts || !errors.Is(out.Stop, c.stop) {
					t.Errorf("attempts = %d, stop = %v; want %d, %v", s.attempts(), out.Stop, c.attempts, c.stop)
				}
				if c.elapsed != 0 && time.Since(start) != c.elapsed {
					t.Errorf("elapsed %v, want %v", time.Since(start), c.elapsed)
				}
			})
		})
	}
}

// A dead server: every attempt ends at a 60 s response-header timeout. Two
// attempts and about two timeouts, not five attempts and five minutes.
func TestStallBudgetDeadServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){
			slow(60*time.Second, fail(&net.OpError{Op: "read", Err: timeoutErr{}}))}}
		start := time.Now()
		resp, err := retry.New(s, retry.Policy{Rand: constRand(0.5)}).RoundTrip(get(t.Context(), api))
		if resp != nil {
			t.Fatal("got a response from a dead server")
		}
		if !errors.Is(err, retry.ErrStalled) || s.attempts() != 2 {
			t.Fatalf("err = %v after %d attempts; want ErrStalled after 2", err, s.attempts())
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("err = %v does not wrap the timeout", err)
		}
		if got := time.Since(start); got != 120*time.Second+250*time.Millisecond {
			t.Errorf("elapsed %v, want 120.25s", got)
		}
	})
}

func TestProgressRestartsBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A shared tracker marked by someone else (a page arriving) keeps the
		// call alive past the budget.
		tracker := liveness.New()
		s := &script{steps: []func(*http.Request) (*http.Response, error){slow(40*time.Second, func(r *http.Request) (*http.Response, error) {
			tracker.Mark()
			return respond(r, 503, nil, ""), nil
		})}}
		ctx := liveness.With(t.Context(), tracker)
		resp, err := retry.New(s, retry.Policy{MaxAttempts: 4, StallTimeout: 60 * time.Second, Rand: constRand(0)}).RoundTrip(get(ctx, api))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if s.attempts() != 4 {
			t.Errorf("attempts = %d, want 4: progress restarts the budget", s.attempts())
		}
		if tracker.Attempts() != 4 || tracker.Retries() != 3 {
			t.Errorf("tracker counted %d attempts, %d retries", tracker.Attempts(), tracker.Retries())
		}
	})
}

func TestCancellation(t *testing.T) {
	t.Run("during an attempt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			s := &script{steps: []func(*http.Request) (*http.Response, error){slow(time.Hour, status(200))}}
			time.AfterFunc(time.Second, cancel)
			_, err := retry.New(s, retry.Policy{}).RoundTrip(get(ctx, api))
			var re *retry.Error
			if !errors.Is(err, context.Canceled) || errors.As(err, &re) || s.attempts() != 1 {
				t.Fatalf("err = %v (%T) after %d attempts; want context.Canceled unwrapped", err, err, s.attempts())
			}
		})
	})
	t.Run("during a wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			ctx, out := retry.WithOutcome(ctx)
			refused := errors.New("connection refused")
			s := &script{steps: []func(*http.Request) (*http.Response, error){fail(refused)}}
			time.AfterFunc(10*time.Second, cancel)
			start := time.Now()
			_, err := retry.New(s, retry.Policy{InitialBackoff: time.Minute, MaxBackoff: time.Minute, Rand: constRand(0)}).RoundTrip(get(ctx, api))
			if !errors.Is(err, context.Canceled) || s.attempts() != 1 || time.Since(start) != 10*time.Second {
				t.Fatalf("err = %v after %d attempts and %v; want Canceled at 10s", err, s.attempts(), time.Since(start))
			}
			// The outcome says who stopped the call and keeps what it was
			// waiting out.
			if !errors.Is(out.Stop, context.Canceled) || !errors.Is(out.Cause, refused) || out.Attempts != 1 {
				t.Errorf("outcome %+v; want Stop Canceled with the refused connection as its cause", out)
			}
		})
	})
}

func TestPerRequestOverride(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(503)}}
		tr := retry.New(s, retry.Policy{})
		resp, err := tr.RoundTrip(get(retry.WithMaxAttempts(t.Context(), 1), api))
		if err != nil || s.attempts() != 1 {
			t.Fatalf("got %v after %d attempts, want one", err, s.attempts())
		}
		resp.Body.Close()
		_, err = tr.RoundTrip(get(retry.WithMaxAttempts(t.Context(), -2), api))
		var pe *retry.PolicyError
		if !errors.As(err, &pe) || pe.Field != "MaxAttempts" || s.attempts() != 1 {
			t.Errorf("invalid override: err = %v, attempts %d; want a PolicyError before sending", err, s.attempts())
		}
	})
}

func TestInvalidPolicyFailsBeforeSending(t *testing.T) {
	s := &script{steps: []func(*http.Request) (*http.Response, error){status(200)}}
	_, err := retry.New(s, retry.Policy{InitialBackoff: time.Minute, MaxBackoff: time.Second}).RoundTrip(get(context.Background(), api))
	var pe *retry.PolicyError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "InitialBackoff") || s.attempts() != 0 {
		t.Fatalf("err = %v after %d attempts; want a PolicyError naming InitialBackoff, nothing sent", err, s.attempts())
	}
}

func TestEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){
			status(503), fail(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), status(429, "Retry-After", "1"), status(200)}}
		var events []event.Event
		tr := retry.New(s, retry.Policy{Rand: constRand(0), Reporter: event.ReporterFunc(func(e event.Event) { events = append(events, e) })})
		resp, err := tr.RoundTrip(get(t.Context(), api+"?api_key=SECRET123&page=2"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		type ev struct {
			kind    event.Kind
			attempt int
			status  int
			class   string
			wait    time.Duration
			reason  string
		}
		want := []ev{
			{event.RequestStarted, 0, 0, "", 0, ""},
			{event.RetryScheduled, 1, 503, "", 500 * time.Millisecond, event.WaitBackoff},
			{event.RetryScheduled, 2, 0, "refused", time.Second, event.WaitBackoff},
			{event.RetryScheduled, 3, 429, "", 1100 * time.Millisecond, event.WaitServerHint},
			{event.RequestFinished, 4, 200, "", 0, ""},
		}
		if len(events) != len(want) {
			t.Fatalf("got %d events, want %d: %+v", len(events), len(want), events)
		}
		for i, w := range want {
			e := events[i]
			got := ev{e.Kind, e.Attempt, e.Status, e.ErrClass, e.Wait, e.Reason}
			if got != w {
				t.Errorf("event %d = %+v, want %+v", i, got, w)
			}
			if strings.Contains(e.URL, "SECRET123") || !strings.Contains(e.URL, "api_key=REDACTED") || e.Method != "GET" {
				t.Errorf("event %d URL %q, method %q: want redacted", i, e.URL, e.Method)
			}
		}
	})
}

func TestErrorTextIsRedacted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		url := "https://user:pw@api.example.gov/x?token=SECRET123"
		s := &script{steps: []func(*http.Request) (*http.Response, error){fail(errors.New("dial " + url + ": no route"))}}
		_, err := retry.New(s, retry.Policy{MaxAttempts: 2, Rand: constRand(0)}).RoundTrip(get(t.Context(), url))
		if err == nil || strings.Contains(err.Error(), "SECRET123") || strings.Contains(err.Error(), "pw@") {
			t.Fatalf("error text %q leaks a secret", err)
		}
	})
}

func TestBodyReadInsideAttempt(t *testing.T) {
	t.Run("truncated body is a failed attempt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			truncated := func(r *http.Request) (*http.Response, error) {
				resp := respond(r, 200, nil, "")
				resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"items":[`), errReader{io.ErrUnexpectedEOF}))
				return resp, nil
			}
			s := &script{steps: []func(*http.Request) (*http.Response, error){truncated, status(200)}}
			ctx := liveness.WithBodyInAttempt(t.Context(), 1<<20)
			resp, err := retry.New(s, retry.Policy{Rand: constRand(0)}).RoundTrip(get(ctx, api))
			if err != nil {
				t.Fatal(err)
			}
			if s.attempts() != 2 {
				t.Errorf("attempts = %d, want 2", s.attempts())
			}
			bb, ok := resp.Body.(*retry.BufferedBody)
			if !ok || string(bb.Bytes()) != "OK" {
				t.Errorf("body = %T, want the buffered second body", resp.Body)
			}
		})
	})
	t.Run("oversized body is not re-sent", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := &script{steps: []func(*http.Request) (*http.Response, error){func(r *http.Request) (*http.Response, error) {
				return respond(r, 200, nil, strings.Repeat("x", 100)), nil
			}}}
			ctx := liveness.WithBodyInAttempt(t.Context(), 10)
			_, err := retry.New(s, retry.Policy{}).RoundTrip(get(ctx, api))
			if !errors.Is(err, liveness.ErrBodyTooLarge) || !errors.Is(err, retry.ErrNotRetryable) || s.attempts() != 1 {
				t.Fatalf("err = %v after %d attempts", err, s.attempts())
			}
		})
	})
	t.Run("stall mid-body ends at the read timeout and is re-sent", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			stall := func(r *http.Request) (*http.Response, error) {
				// Silent after a few bytes until closed, as a net/http body
				// is: the watchdog closes it (ADR 230).
				resp := respond(r, 200, nil, "")
				resp.Body = &lateStall{closed: make(chan struct{})}
				return resp, nil
			}
			s := &script{steps: []func(*http.Request) (*http.Response, error){stall, status(200)}}
			ctx := liveness.WithBodyInAttempt(t.Context(), -1)
			start := time.Now()
			resp, err := retry.New(s, retry.Policy{ReadTimeout: 5 * time.Second, Rand: constRand(0)}).RoundTrip(get(ctx, api))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if s.attempts() != 2 || time.Since(start) != 5500*time.Millisecond {
				t.Errorf("attempts %d after %v, want 2 after 5.5s", s.attempts(), time.Since(start))
			}
		})
	})
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestResponseBodyReadsAreProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tracker := liveness.New()
		s := &script{steps: []func(*http.Request) (*http.Response, error){status(200)}}
		resp, err := retry.New(s, retry.Policy{}).RoundTrip(get(liveness.With(t.Context(), tracker), api))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second)
		if tracker.Silence() != 30*time.Second {
			t.Fatalf("silence %v", tracker.Silence())
		}
		if _, err := io.ReadAll(resp.Body); err != nil {
			t.Fatal(err)
		}
		if tracker.Silence() != 0 {
			t.Errorf("silence after reading the body = %v, want 0", tracker.Silence())
		}
		resp.Body.Close()
	})
}

// TestQuotaEvents: the quota of a response that is re-sent is a QuotaSeen
// of its own, before the retry; the quota of the response handed back rides
// on its RequestFinished, stamped when it was read, and there is no
// QuotaSeen for it (ADR 0167). A response without rate-limit fields, or
// with unusable ones, finishes without a quota. With Pace and without it.
func TestQuotaEvents(t *testing.T) {
	for _, pace := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			s := &script{steps: []func(*http.Request) (*http.Response, error){
				status(503, "X-RateLimit-Remaining", "7", "X-RateLimit-Reset", "30"),
				status(200, "RateLimit", `"default";r=6;t=29`),
				status(200),
				status(200, "RateLimit", `"default";r=nonsense`),
			}}
			var events []event.Event
			var received []time.Time
			tr := retry.New(s, retry.Policy{Pace: pace, Rand: constRand(0),
				Reporter: event.ReporterFunc(func(e event.Event) {
					events, received = append(events, e), append(received, time.Now())
				})})
			for range 3 {
				resp, err := tr.RoundTrip(get(t.Context(), api))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			type ev struct {
				kind      event.Kind
				status    int
				quota     bool
				remaining int64
				reset     time.Duration
				has       bool
			}
			want := []ev{
				{event.RequestStarted, 0, false, 0, 0, false},
				{event.QuotaSeen, 503, false, 7, 30 * time.Second, true},
				{event.RetryScheduled, 503, false, 0, 0, false},
				{event.RequestFinished, 200, true, 6, 29 * time.Second, true},
				{event.RequestStarted, 0, false, 0, 0, false},
				{event.RequestFinished, 200, false, 0, 0, false},
				{event.RequestStarted, 0, false, 0, 0, false},
				{event.RequestFinished, 200, false, 0, 0, false},
			}
			if len(events) != len(want) {
				t.Fatalf("pace %v: got %d events, want %d: %+v", pace, len(events), len(want), events)
			}
			for i, w := range want {
				e := events[i]
				if got := (ev{e.Kind, e.Status, e.Quota, e.Remaining, e.Reset, e.HasQuota()}); got != w {
					t.Errorf("pace %v: event %d = %+v, want %+v", pace, i, got, w)
				}
				if !e.Time.Equal(received[i]) { // synctest: no time passes between reading and reporting
					t.Errorf("pace %v: event %d stamped %v, reported at %v", pace, i, e.Time, received[i])
				}
			}
		})
	}
}

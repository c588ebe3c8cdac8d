package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/steadyhttp/steady/retry"
)

// statusErr is the small typed error a caller makes of a final status: it
// wraps the retry stop reason and judges its status with the package rule.
type statusErr struct {
	code int
	stop error
}

func (e *statusErr) Error() string   { return fmt.Sprintf("status %d", e.code) }
func (e *statusErr) Unwrap() error   { return e.stop }
func (e *statusErr) Retryable() bool { return retry.TransientStatus(e.code) }

type retryable bool

func (r retryable) Error() string   { return fmt.Sprintf("retryable=%v", bool(r)) }
func (r retryable) Retryable() bool { return bool(r) }

func TestTransient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"exhausted", retry.ErrExhausted, true},
		{"stalled in a retry.Error", &retry.Error{Reason: retry.ErrStalled}, true},
		{"retry-after wrapped", fmt.Errorf("get: %w", &retry.Error{Reason: retry.ErrRetryAfter}), true},
		{"budget", retry.ErrBudget, true},
		{"rate limited", retry.ErrRateLimited, true},
		{"not retryable", &retry.Error{Reason: retry.ErrNotRetryable, Err: errors.New("x509")}, false},
		{"status 503 exhausted", &statusErr{code: 503, stop: retry.ErrExhausted}, true},
		{"status 404", &statusErr{code: 404}, false},
		{"status 500 accepted", &statusErr{code: 500}, true},
		{"Retryable true", retryable(true), true},
		{"Retryable false", retryable(false), false},
		{"Retryable true wrapped", fmt.Errorf("item 3: %w", retryable(true)), true},
		{"plain", errors.New("boom"), false},
		{"text says exhausted", errors.New("attempts exhausted"), false},
		{"canceled", context.Canceled, false},
		{"deadline", context.DeadlineExceeded, false},
	} {
		if got := retry.Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestTransientStatus(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]bool{
		200: false, 400: false, 401: false, 403: false, 404: false, 413: false,
		408: true, 425: true, 429: true,
		500: true, 501: true, 502: true, 503: true, 504: true, 505: true, 599: true,
		600: false,
	} {
		if got := retry.TransientStatus(code); got != want {
			t.Errorf("TransientStatus(%d) = %v, want %v", code, got, want)
		}
	}
}

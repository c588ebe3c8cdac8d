package otelsteady

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/retry"
)

func TestWaitReason(t *testing.T) {
	for in, want := range map[string]string{
		event.WaitBackoff:        WaitBackoff,
		event.WaitServerHint:     WaitServerHint,
		event.WaitRateLimited:    WaitPacing,
		event.WaitOverload:       WaitOverload,
		"resume at byte 1048576": WaitResume,
		"":                       WaitOther,
		"something new":          WaitOther,
	} {
		if got := waitReason(in); got != want {
			t.Errorf("waitReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStopReason(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{retry.ErrExhausted, StopExhausted},
		{retry.ErrStalled, StopStalled},
		{retry.ErrNotRetryable, StopNotRetryable},
		{retry.ErrRetryAfter, StopRetryAfter},
		{retry.ErrBudget, StopBudget},
		{retry.ErrRateLimited, StopRateLimited},
		{fmt.Errorf("refused: %w, %w", retry.ErrOverload, breaker.ErrOpen), StopCircuitOpen},
		{fmt.Errorf("refused: %w, %w", retry.ErrOverload, breaker.ErrThrottled), StopThrottled},
		{context.Canceled, StopCanceled},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), StopDeadline},
		{errors.New("new"), StopOther},
		{nil, StopOther},
	} {
		if got := stopReason(c.err); got != c.want {
			t.Errorf("stopReason(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestHostPort(t *testing.T) {
	for _, c := range []struct {
		host, url string
		h         string
		p         int
	}{
		{"api.example.gov", "https://api.example.gov/x", "api.example.gov", 443},
		{"api.example.gov", "http://api.example.gov/x", "api.example.gov", 80},
		{"127.0.0.1:8080", "http://127.0.0.1:8080/x", "127.0.0.1", 8080},
		{"[::1]:8443", "https://[::1]:8443/", "::1", 8443},
		{"[::1]", "https://[::1]/", "::1", 443},
		{"h:99999", "https://h:99999/", "h", 0},
		{"h", "ftp://h/", "h", 0},
	} {
		h, p := hostPort(c.host, c.url)
		if h != c.h || p != c.p {
			t.Errorf("hostPort(%q, %q) = %q, %d; want %q, %d", c.host, c.url, h, p, c.h, c.p)
		}
	}
}

func TestNormalMethod(t *testing.T) {
	if kv, orig := normalMethod("PROPFIND"); kv.Value.AsString() != "_OTHER" || orig != "PROPFIND" || spanName(kv, orig) != "HTTP" {
		t.Errorf("PROPFIND gave %v, %q", kv, orig)
	}
	if kv, orig := normalMethod(""); kv.Value.AsString() != "GET" || orig != "" || spanName(kv, orig) != "GET" {
		t.Errorf("the empty method gave %v, %q", kv, orig)
	}
}

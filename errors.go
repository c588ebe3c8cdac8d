package steady

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// StatusError is a final response whose status is not a success, with the
// evidence a caller or a support ticket needs.
type StatusError struct {
	StatusCode int
	Status     string
	Method     string
	URL        string // redacted
	// Attempts is how many attempts the call made, and Stop why retrying
	// ended (nil when the status is one the policy does not re-send).
	Attempts int
	Stop     error
	// Excerpt is at most DefaultErrorExcerpt bytes of the body, with any
	// configured key value redacted.
	Excerpt string
	// RequestID is the server's request id (X-Request-Id or a similar
	// header), "" when none was sent.
	RequestID string
}

func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s", e.Method, e.URL, statusText(e.StatusCode, e.Status))
	if e.Attempts > 1 || e.Stop != nil {
		fmt.Fprintf(&b, " after %d attempt", e.Attempts)
		if e.Attempts != 1 {
			b.WriteByte('s')
		}
		if e.Stop != nil {
			fmt.Fprintf(&b, " (%v)", e.Stop)
		}
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, "; request id %s", e.RequestID)
	}
	return b.String()
}

// Unwrap returns the stop reason, so errors.Is(err, retry.ErrExhausted) works.
func (e *StatusError) Unwrap() error { return e.Stop }

// Retryable reports whether issuing the same request again later might
// succeed, by [retry.TransientStatus]: 408, 425, 429 and every 5xx. This is
// broader than what the transport re-sends by itself (a 500 under
// retry.GatewayStatus is not re-sent at once, yet may pass later), and a
// caller that resumes work later ([retry.Transient]) uses it to decide what
// to keep.
func (e *StatusError) Retryable() bool { return retry.TransientStatus(e.StatusCode) }

// RateLimitError is a 429, a 403 that says it is a rate limit (a
// Retry-After or a spent quota, as GitHub's limits send), or a 503 with a
// wait hint, that retrying could not ride out.
type RateLimitError struct {
	StatusError
	// Wait is the server's wait hint, 0 when it gave none.
	Wait time.Duration
}

// RetryAfter returns the server's wait hint, 0 when it gave none: the
// interface every waiting error shares, which fanout reads to say how long
// an interrupted run should wait before it resumes.
func (e *RateLimitError) RetryAfter() time.Duration { return e.Wait }

func (e *RateLimitError) Error() string {
	s := e.StatusError.Error()
	if e.Wait > 0 {
		s += fmt.Sprintf("; the server asked to wait %v", e.Wait.Round(time.Second))
	}
	return s
}

// Unwrap returns the embedded StatusError.
func (e *RateLimitError) Unwrap() error { return &e.StatusError }

// TooLargeError is a 413 or 414: the request, usually its URL, is larger than
// the server accepts. Split the query with the chunk package and run the
// parts with FanOut.
type TooLargeError struct {
	StatusError
}

func (e *TooLargeError) Error() string {
	return e.StatusError.Error() + ": the request is too large for the server; split the list parameter with chunk.Plan and run the parts with steady.FanOut"
}

// Unwrap returns the embedded StatusError.
func (e *TooLargeError) Unwrap() error { return &e.StatusError }

func statusText(code int, status string) string {
	if status != "" {
		if strings.HasPrefix(status, fmt.Sprint(code)) {
			return status
		}
		return fmt.Sprintf("%d %s", code, status)
	}
	return fmt.Sprintf("%d %s", code, http.StatusText(code))
}

var requestIDHeaders = [...]string{"X-Request-Id", "X-Amzn-Requestid", "X-Correlation-Id", "Request-Id", "Cf-Ray"}

// statusError reads a bounded excerpt of resp's body, closes it and returns
// the typed error for its status. Every text the server supplied (status
// line, excerpt, request id, URL) goes through red: servers echo the
// request, and a reason phrase may hold terminal escapes.
func statusError(resp *http.Response, out *retry.Outcome, red *credentials.Redactor) error {
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, DefaultErrorExcerpt))
	resp.Body.Close()
	e := StatusError{
		StatusCode: resp.StatusCode,
		Status:     red.Text(resp.Status),
		Method:     red.Text(resp.Request.Method),
		URL:        red.URL(resp.Request.URL),
		Excerpt:    red.Text(string(bytes.ToValidUTF8(excerpt, nil))),
	}
	if out != nil {
		e.Attempts, e.Stop = out.Attempts, out.Stop
	}
	for _, h := range requestIDHeaders {
		if v := resp.Header.Get(h); v != "" {
			e.RequestID = red.Text(v)
			break
		}
	}
	switch {
	case ratelimit.IsRateLimit(resp) || (out != nil && errors.Is(out.Stop, retry.ErrRetryAfter)):
		hint := time.Duration(0)
		if out != nil {
			hint = out.RetryAfter
		}
		if hint == 0 {
			hint, _ = retry.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
		return &RateLimitError{StatusError: e, Wait: hint}
	case resp.StatusCode == http.StatusRequestEntityTooLarge || resp.StatusCode == http.StatusRequestURITooLong:
		return &TooLargeError{StatusError: e}
	}
	return &e
}

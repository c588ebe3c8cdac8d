package otelsteady

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/retry"
)

// Attribute keys the adapter adds to the HTTP client conventions.
const (
	// KeyWaitReason is why a wait was taken: one of the Wait values.
	KeyWaitReason = "steady.wait.reason"
	// KeyWaitDuration is a wait's planned length in seconds; on a stop, the
	// wait that was refused (a Retry-After above the cap, a pacing hold
	// beyond it).
	KeyWaitDuration = "steady.wait.duration"
	// KeyStopReason is why retrying ended: one of the Stop values.
	KeyStopReason = "steady.stop.reason"
	// KeyResend says whether an attempt was a re-send (metric attribute).
	KeyResend = "steady.resend"
	// KeyBreakerState is what overload control of a host changed to: one
	// of the Breaker values.
	KeyBreakerState = "steady.breaker.state"
	// KeyQuotaRemaining and KeyQuotaReset describe a rate-limit quota a
	// response announced: requests left, and seconds until the reset.
	KeyQuotaRemaining = "steady.quota.remaining"
	KeyQuotaReset     = "steady.quota.reset"
	// KeyParkMode is how parked work continues: "wait" (it sleeps until
	// the reset) or "exit" (a later run continues).
	KeyParkMode = "steady.park.mode"
)

// Span event names.
const (
	// EventWait: a wait before the next attempt, on the span of the attempt
	// that failed; a pacing hold, before any attempt of its own, on the
	// request's span.
	EventWait = "steady.wait"
	// EventStop: retrying ended, on the last attempt's span; or, when it
	// ended between attempts, on the request's span.
	EventStop = "steady.stop"
	// EventQuota: the attempt's response announced its rate-limit quota.
	EventQuota = "steady.quota"
	// EventBreaker: overload control of a host changed, on the span in the
	// event's context when it has one: its new state, and the wait until
	// probes (open) or the learned window of its limiter (limit).
	EventBreaker = "steady.breaker"
	// EventPark: the work saved its state until a quota resets, on the
	// span in the event's context (the run's): how it continues
	// ([KeyParkMode]) and the wait until the reset.
	EventPark = "steady.park"
)

// Values of [KeyBreakerState]: the circuit's new state, or BreakerLimit
// when only the concurrency limit or the spacing changed.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half_open"
	BreakerLimit    = "limit"
)

// Values of [KeyWaitReason].
const (
	WaitBackoff    = "backoff"
	WaitServerHint = "server_hint"
	WaitPacing     = "pacing"
	WaitResume     = "resume"
	WaitOverload   = "overload"
	WaitOther      = "_OTHER"
)

// Values of [KeyStopReason].
const (
	StopExhausted    = "exhausted"
	StopStalled      = "stalled"
	StopNotRetryable = "not_retryable"
	StopRetryAfter   = "retry_after_above_cap"
	StopBudget       = "budget"
	StopRateLimited  = "rate_limited"
	StopCanceled     = "canceled"
	StopDeadline     = "deadline_exceeded"
	StopCircuitOpen  = "circuit_open"
	StopThrottled    = "throttled"
	StopOther        = "_OTHER"
)

// waitReason maps an event's reason to a value of [KeyWaitReason]. The
// reasons are the progress package's constants; a resumed body's wait
// names its byte offset, so only its first word is kept, which keeps the
// metric's attribute set small.
func waitReason(r string) string {
	switch r {
	case event.WaitBackoff:
		return WaitBackoff
	case event.WaitServerHint:
		return WaitServerHint
	case event.WaitRateLimited:
		return WaitPacing
	case event.WaitOverload:
		return WaitOverload
	}
	if strings.HasPrefix(r, "resume") {
		return WaitResume
	}
	return WaitOther
}

// stopReason maps a stop's sentinel to a value of [KeyStopReason].
func stopReason(err error) string {
	switch {
	case err == nil:
		return StopOther
	case errors.Is(err, retry.ErrExhausted):
		return StopExhausted
	case errors.Is(err, retry.ErrStalled):
		return StopStalled
	case errors.Is(err, retry.ErrNotRetryable):
		return StopNotRetryable
	case errors.Is(err, retry.ErrRetryAfter):
		return StopRetryAfter
	case errors.Is(err, retry.ErrBudget):
		return StopBudget
	case errors.Is(err, retry.ErrRateLimited):
		return StopRateLimited
	case errors.Is(err, breaker.ErrThrottled):
		return StopThrottled
	case errors.Is(err, retry.ErrOverload), errors.Is(err, breaker.ErrOpen):
		return StopCircuitOpen
	case errors.Is(err, context.Canceled):
		return StopCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return StopDeadline
	}
	return StopOther
}

// breakerState maps a BreakerChanged event's reason to a value of
// [KeyBreakerState].
func breakerState(r string) string {
	switch r {
	case "closed":
		return BreakerClosed
	case "open":
		return BreakerOpen
	case "half-open":
		return BreakerHalfOpen
	case "limit":
		return BreakerLimit
	}
	return WaitOther
}

var errNoPort = errors.New("no port")

// hostPort splits an event's host into server.address and server.port,
// taking the port from the URL's scheme when the host names none.
func hostPort(host, rawURL string) (string, int) {
	var (
		h, p string
		err  = errNoPort
	)
	// SplitHostPort allocates its error for a host without a port, the
	// common case; a colon after any closing bracket means a port.
	if i := strings.LastIndexByte(host, ':'); i >= 0 && i > strings.LastIndexByte(host, ']') {
		h, p, err = net.SplitHostPort(host)
	}
	if err != nil {
		h = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		switch {
		case strings.HasPrefix(rawURL, "https:"):
			return h, 443
		case strings.HasPrefix(rawURL, "http:"):
			return h, 80
		}
		return h, 0
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || n > 65535 {
		return h, 0
	}
	return h, n
}

// normalMethod returns http.request.method as the conventions want it: a
// known method, or _OTHER with the original kept apart.
func normalMethod(m string) (attribute.KeyValue, string) {
	switch m {
	case "", http.MethodGet:
		return semconv.HTTPRequestMethodGet, ""
	case http.MethodHead:
		return semconv.HTTPRequestMethodHead, ""
	case http.MethodPost:
		return semconv.HTTPRequestMethodPost, ""
	case http.MethodPut:
		return semconv.HTTPRequestMethodPut, ""
	case http.MethodDelete:
		return semconv.HTTPRequestMethodDelete, ""
	case http.MethodPatch:
		return semconv.HTTPRequestMethodPatch, ""
	case http.MethodOptions:
		return semconv.HTTPRequestMethodOptions, ""
	case http.MethodTrace:
		return semconv.HTTPRequestMethodTrace, ""
	case http.MethodConnect:
		return semconv.HTTPRequestMethodConnect, ""
	}
	return semconv.HTTPRequestMethodOther, m
}

// spanName is the method, as the conventions name a client span without a
// URL template; an unknown method is "HTTP".
func spanName(method attribute.KeyValue, original string) string {
	if original != "" {
		return "HTTP"
	}
	return method.Value.AsString()
}

package retry

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/ratelimit"
)

// Defaults of a [Policy] that other packages name; every default comes
// from the one table in package config.
const (
	DefaultMaxAttempts   = config.DefaultRetries + 1
	DefaultMaxRetryAfter = config.DefaultMaxRetryAfter
)

// idempotentMethods are re-sent without further proof of idempotency.
var idempotentMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPut,
	http.MethodDelete, http.MethodOptions, http.MethodTrace,
}

// DefaultMethods returns the methods re-sent without further proof of
// idempotency: GET, HEAD, PUT, DELETE, OPTIONS and TRACE. The slice is a
// fresh copy.
func DefaultMethods() []string { return slices.Clone(idempotentMethods) }

// A Policy says what is re-sent and how long to wait. The zero value is the
// default policy; each zero field means the default in its comment.
type Policy struct {
	// MaxAttempts bounds the tries: the first attempt plus re-sends.
	// 0 means 5; 1 disables retry.
	MaxAttempts int
	// InitialBackoff is the ceiling of the first backoff (0: 500ms). Re-send
	// n waits U(0, min(MaxBackoff, InitialBackoff·2^(n-1))].
	InitialBackoff time.Duration
	// MaxBackoff caps every backoff (0: 30s).
	MaxBackoff time.Duration
	// MaxRetryAfter is the longest server-named wait the transport sleeps
	// off (0: 60s). A longer Retry-After stops retrying at once.
	MaxRetryAfter time.Duration
	// StallTimeout is the no-progress budget: how long a call may go
	// without receiving data before no further re-send is started
	// (0: 60s; negative disables).
	StallTimeout time.Duration
	// ReadTimeout bounds the silence of a body: read inside the attempt
	// (see [liveness.WithBodyInAttempt]), a body that stops arriving for
	// this long fails the attempt; handed to the caller through the body
	// layer (package resume), a read that waits this long fails with a
	// [*liveness.ReadTimeoutError], or the body is resumed (0: 60s;
	// negative disables).
	ReadTimeout time.Duration
	// PreReadBytes bounds how much of a response body the transport reads
	// inside the attempt when the body layer could not resume it: a
	// response to GET, HEAD, OPTIONS or TRACE, not a 206 or an event
	// stream, without a strong validator, whose Content-Length is unknown
	// or at most this bound. A body that breaks within it is a failed
	// attempt, re-sent, even for a caller that reads only after RoundTrip
	// returned; a longer one is handed back as the bytes read followed by
	// the rest of the stream (0: 1 MiB; negative: never).
	PreReadBytes int64
	// ReplayBytes bounds how much of a request body without GetBody the
	// body layer (package resume) keeps as it is sent, to send it again: a
	// longer body is sent once, and a re-send fails naming the bound. A
	// body that is an io.Seeker is rewound instead, whatever its length
	// (0: 1 MiB; negative: nothing is kept).
	ReplayBytes int64
	// RetryStatus reports whether a status is re-sent (nil: [GatewayStatus]).
	RetryStatus func(code int) bool
	// Methods lists the methods re-sent without an Idempotency-Key, matched
	// case-insensitively (nil: [DefaultMethods], the idempotent ones). Listing POST or PATCH opts
	// them in: such a request without an Idempotency-Key gets one generated
	// once and sent unchanged on every attempt.
	Methods []string
	// Rand returns a number in [0,1) for jitter (nil: a goroutine-safe
	// random source). Tests set it to make waits exact.
	Rand func() float64
	// Reporter receives an event per attempt (nil: none).
	Reporter event.Reporter
	// Budget, when set, bounds re-sends across every call sharing it; a call
	// whose re-send the budget refuses stops with [ErrBudget].
	Budget *budget.Budget
	// Pacer is told every response's rate-limit fields and holds the
	// requests whose quota is spent until its reset (bounded by
	// MaxRetryAfter). nil: a [*ratelimit.Pacer] of the transport's own,
	// made by [New] with its MaxHold set to MaxRetryAfter. Transports given
	// one Pacer pace as one client: a [*ratelimit.Pacer] in a process, a
	// [*ratelimit.SharedPacer] across processes.
	Pacer ratelimit.Limiter
	// NoPacing turns pacing off: nothing is held, whatever the responses
	// announce. It excludes Pacer.
	NoPacing bool
	// Overload, when set, is asked before every attempt whether its host
	// may be sent to now, and told every attempt's outcome (ADR 0285): a
	// circuit per host that fails calls fast through an outage, a throttle
	// that sheds first attempts to a failing host, and a concurrency limit
	// and spacing that back off a host answering 429 without quota fields.
	// A refusal ends the call with [ErrOverload]; nil: no overload control.
	// Transports given one Breaker share its state, per host.
	Overload *breaker.Breaker
	// OverloadKey keeps apart, under one host, the overload state of
	// callers with different credentials: a hash of the credential, never
	// the credential itself ("": the host alone).
	OverloadKey string

	defaultMethods bool // Methods was nil: the idempotent set, checked without folding
}

// Validate reports the first invalid field, by name.
func (p Policy) Validate() error {
	var errs []error
	check := func(bad bool, field, format string, args ...any) {
		if bad {
			errs = append(errs, &PolicyError{Field: field, Problem: fmt.Sprintf(format, args...)})
		}
	}
	check(p.MaxAttempts < 0, "MaxAttempts", "is %d; want 0 (default) or more", p.MaxAttempts)
	check(p.InitialBackoff < 0, "InitialBackoff", "is negative (%v)", p.InitialBackoff)
	check(p.MaxBackoff < 0, "MaxBackoff", "is negative (%v)", p.MaxBackoff)
	check(p.MaxRetryAfter < 0, "MaxRetryAfter", "is negative (%v)", p.MaxRetryAfter)
	if p.InitialBackoff >= 0 && p.MaxBackoff >= 0 {
		eff := p.withDefaults()
		check(eff.InitialBackoff > eff.MaxBackoff, "InitialBackoff",
			"(%v) exceeds MaxBackoff (%v)", eff.InitialBackoff, eff.MaxBackoff)
	}
	check(p.NoPacing && p.Pacer != nil, "NoPacing", "is set with a Pacer")
	for _, m := range p.Methods {
		check(m == "" || strings.ContainsAny(m, " \t\r\n"), "Methods", "contains an invalid method %q", m)
	}
	return errors.Join(errs...)
}

// PolicyError names an invalid field of a [Policy].
type PolicyError struct {
	Field   string
	Problem string
}

func (e *PolicyError) Error() string { return "retry: invalid policy: " + e.Field + " " + e.Problem }

// withDefaults returns p with every zero field set to its default.
func (p Policy) withDefaults() Policy {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.InitialBackoff == 0 {
		p.InitialBackoff = config.DefaultInitialBackoff
	}
	if p.MaxBackoff == 0 {
		p.MaxBackoff = max(config.DefaultMaxBackoff, p.InitialBackoff)
	}
	if p.MaxRetryAfter == 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.StallTimeout == 0 {
		p.StallTimeout = config.DefaultStallTimeout
	}
	if p.ReadTimeout == 0 {
		p.ReadTimeout = config.DefaultReadTimeout
	}
	if p.PreReadBytes == 0 {
		p.PreReadBytes = config.DefaultPreReadBytes
	}
	if p.ReplayBytes == 0 {
		p.ReplayBytes = config.DefaultReplayBytes
	}
	if p.RetryStatus == nil {
		p.RetryStatus = GatewayStatus
	}
	if p.Methods == nil {
		p.Methods, p.defaultMethods = idempotentMethods, true
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	return p
}

// paced returns p with own as its Pacer when it names none and does not
// opt out of pacing.
func (p Policy) paced(own ratelimit.Limiter) Policy {
	if p.Pacer == nil && !p.NoPacing {
		p.Pacer = own
	}
	return p
}

// allowsMethod reports whether the policy re-sends method without proof.
func (p *Policy) allowsMethod(method string) bool {
	if p.defaultMethods && idempotentMethod(method) {
		return true
	}
	if method == "" {
		method = http.MethodGet
	}
	return slices.ContainsFunc(p.Methods, func(m string) bool { return strings.EqualFold(m, method) })
}

// GatewayStatus re-sends 429, 502, 503 and 504: the answers of a gateway or a
// rate limiter, for services that answer a bad query with a 500.
func GatewayStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// AnyServerError re-sends 429 and every 5xx: for query interfaces and
// fan-out, where a 500 is an upstream hiccup.
func AnyServerError(code int) bool {
	return code == http.StatusTooManyRequests || (code >= 500 && code <= 599)
}

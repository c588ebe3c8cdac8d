package steady

import (
	"net/http"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/retry"
)

// Defaults of [Options] of the facade's own; the others come from the one
// table in package config.
const (
	DefaultUserAgent = "steady/1 (+https://github.com/steadyhttp/steady)"
	// DefaultErrorExcerpt is how much of an error response's body a
	// StatusError keeps.
	DefaultErrorExcerpt = 1024
)

// Options configure a [Client]. The zero value is useful: each zero field
// means the default in its comment.
type Options struct {
	// BaseURL resolves the relative paths given to Do, GetJSON and Pages.
	BaseURL string
	// Keys are the API keys and the hosts that accept each one.
	Keys []credentials.Key
	// Policy is the retry policy (zero: retry's defaults, which pace by the
	// quotas responses announce, read a small body without a validator
	// inside the attempt, and keep up to 1 MiB of a request body without
	// GetBody to re-send it). Fan-outs re-send any 5xx unless
	// Policy.RetryStatus is set.
	Policy retry.Policy
	// Concurrency bounds the attempts in flight of a fan-out (0: 32).
	Concurrency int
	// ConnectTimeout bounds dialling and the TLS handshake (0: 10s).
	ConnectTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for a response's headers after
	// the request was written (0: 60s; negative: no bound).
	ResponseHeaderTimeout time.Duration
	// UserAgent is sent when a request has none (0: DefaultUserAgent).
	UserAgent string
	// Reporter receives the events of every layer (nil: silent).
	Reporter event.Reporter
	// Transport replaces the tuned http.Transport at the bottom of the
	// stack, for tests and special dialling; the timeouts above then do not
	// apply.
	Transport http.RoundTripper

	// MaxBodyBytes bounds the bodies GetJSON and page walks read, after
	// decompression (0: 64 MiB; negative: no bound). A larger body is a
	// *liveness.BodyTooLargeError, never re-sent.
	MaxBodyBytes int64

	// Overload configures overload control, on by default (ADR 0285): per
	// host, a circuit breaker that fails calls fast through an outage,
	// client-side throttling of the first attempts to a failing host, and
	// for 429s without quota fields a quota learned from the limiter's
	// windows (ADR 0340) and a limit on the attempts in flight that halves
	// on such a 429 and grows back on successes. The zero
	// value is package breaker's defaults: the circuit opens when half of
	// at least 20 calls within a minute failed (a 5xx the policy re-sends,
	// a timeout, a reset; never a 429), stays open 5 s (or the host's
	// Retry-After, at most a minute), then lets 1 probe through; the
	// throttle sheds first attempts as the SRE book's formula says (K = 2
	// over 2 minutes), never more than 80% of them; MaxConcurrency 0
	// means Concurrency. A refused call fails at once with an error that
	// matches retry.ErrOverload and breaker.ErrOpen or breaker.ErrThrottled,
	// whose RetryAfter says when the host may be tried again. State
	// changes go to the Reporter as event.BreakerChanged. A Breaker set as
	// Policy.Overload is used instead, shared by every client given it.
	Overload breaker.Config
	// NoOverload turns overload control off.
	NoOverload bool

	keyEnv          string // the variable an API key came from, for error messages
	derivedReporter bool   // Policy.Reporter was filled in from Reporter
}

func (o Options) withDefaults() Options {
	if o.Concurrency <= 0 {
		o.Concurrency = config.DefaultConcurrent
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = config.DefaultConnectTimeout
	}
	if o.ResponseHeaderTimeout == 0 {
		o.ResponseHeaderTimeout = config.DefaultReadTimeout
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = config.DefaultMaxBodyBytes
	}
	if o.Policy.Reporter == nil && o.Reporter != nil {
		o.Policy.Reporter, o.derivedReporter = o.Reporter, true
	}
	return o
}

package otelsteady

import (
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// Propagating returns a RoundTripper that writes the trace context of each
// request's context into its headers (traceparent and the like, as p
// writes them) before sending it through next, and records nothing. Placed
// below steady's retrying transport, as the steady.Client's
// Options.Transport, it propagates each attempt's span to the server
// without a second span per attempt and, since it records no URL, safely
// below the credentials layer. A nil p means the global propagator, a nil
// next [http.DefaultTransport]. The caller's request is never modified.
func Propagating(next http.RoundTripper, p propagation.TextMapPropagator) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &propagating{next: next, p: p}
}

type propagating struct {
	next http.RoundTripper
	p    propagation.TextMapPropagator
}

func (t *propagating) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.p
	if p == nil {
		p = otel.GetTextMapPropagator()
	}
	fields := propagation.HeaderCarrier{}
	p.Inject(req.Context(), fields)
	if len(fields) == 0 {
		return t.next.RoundTrip(req)
	}
	r := *req
	r.Header = req.Header.Clone()
	if r.Header == nil {
		r.Header = make(http.Header, len(fields))
	}
	for k, v := range fields {
		r.Header[k] = v
	}
	return t.next.RoundTrip(&r)
}

// CloseIdleConnections closes next's idle connections.
func (t *propagating) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Package otelsteady records what steady does as OpenTelemetry spans and
// metrics: a client span for every attempt, every wait with its reason,
// every stop, and counters an operator can graph.
//
// An [Adapter] is a [event.Tracer]. Give it as the client's Reporter
// (with a renderer through [event.Multi] if you also draw progress):
//
//	a, err := otelsteady.New(otelsteady.Options{Keys: keys})
//	client, err := steady.New(steady.Options{Keys: keys, Reporter: a})
//
// # Spans
//
// Each attempt is a client span, child of the span in the request's
// context, with the HTTP client conventions: http.request.method,
// server.address, server.port, url.full (redacted), then
// http.response.status_code, or error.type for a failure without a
// response, and http.request.resend_count on re-sends. The span starts when
// the attempt is handed on (after any wait for a concurrency slot) and
// ends when the retrying transport decided about it: at the response's
// headers, or at the end of its body when the transport reads it (page
// walks). The attempt is sent with its span in its context, so that an
// instrumented transport below makes its spans children of it.
//
// A wait before a re-send is a steady.wait event (steady.wait.reason:
// backoff, server_hint, resume; steady.wait.duration in seconds) on the span
// of the attempt that failed. A pacing hold comes before any attempt of its
// own and is an event of the request's span. A stop is a steady.stop event
// (steady.stop.reason: exhausted, stalled, retry_after_above_cap, budget,
// not_retryable, rate_limited, circuit_open, throttled, canceled,
// deadline_exceeded) on the last attempt's span, with the refused wait's
// duration for a Retry-After above the cap; a stop between attempts (a
// call overload control refused goes to no host) goes to the request's
// span. A response announcing its quota adds a steady.quota event. A change
// of a host's overload control is counted by steady.breaker.changes
// (server.address, steady.breaker.state: open, half_open, closed, limit),
// and is a steady.breaker event of the span in its context when it has one.
//
// # With otelhttp
//
// steady above otelhttp (retry.New over otelhttp.NewTransport, or
// otelhttp's transport as the bottom of a hand-built stack): for each
// attempt, steady's span, and under it otelhttp's client span, whose
// context otelhttp propagates, so the server's spans hang under the
// attempt. The adapter writes no trace headers itself: otelhttp below
// steady does, or [Propagating], a bottom transport that only writes them,
// for a second span per attempt saved. otelhttp's span ends when the body is
// closed, which may be after steady's span ended. Put otelhttp above the
// credentials layer, never below it: below, it sees the URL with a key
// sent as a query parameter, and records it. With the [steady.Client]
// facade, whose Options.Transport is below the credentials layer, put
// otelhttp there only when the keys travel in headers; [Propagating] is
// safe there, since it records nothing.
//
// otelhttp above steady (otelhttp.NewTransport over the client's
// transport): otelhttp's one span is the logical request; steady's attempt
// spans are its children; otelhttp injects its span's context once, so
// the server's spans for every attempt hang under otelhttp's span.
//
// Either way the trace that starts in the caller's span stays one trace.
//
// # Metrics
//
// Counters: steady.attempts (server.address, http.request.method,
// steady.resend), steady.resends (server.address, error.type,
// steady.wait.reason), steady.budget.refusals, steady.pacing.holds,
// steady.stops (steady.stop.reason), steady.walk.pages and steady.walk.rows
// (server.address), steady.fanout.subrequests. A histogram:
// steady.wait.duration in seconds (server.address, steady.wait.reason). No
// metric carries a URL.
//
// # Secrets
//
// The events' URLs and texts are redacted by the layers that made them.
// The adapter redacts again every URL quoted in a recorded text, and
// replaces the values of the keys given in [Options].Keys wherever they
// appear, so neither a key nor a URL carrying one is recorded.
package otelsteady

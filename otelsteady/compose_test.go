package otelsteady_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/otelsteady"
	"github.com/steadyhttp/steady/retry"
)

// server answers 503 to its first request and 200 after, itself
// instrumented with otelhttp, so that the test sees where the client's
// propagated context put the server's spans.
func server(t *testing.T, r *rig) *httptest.Server {
	var n atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "[]")
	})
	srv := httptest.NewServer(otelhttp.NewHandler(h, "server",
		otelhttp.WithTracerProvider(r.tp), otelhttp.WithPropagators(propagation.TraceContext{})))
	t.Cleanup(srv.Close)
	return srv
}

// doer is an *http.Client or a *steady.Client.
type doer interface {
	Do(*http.Request) (*http.Response, error)
}

// fetch GETs url through c under the caller's span and returns the
// request it sent.
func (r *rig) fetch(t *testing.T, c doer, url string) *http.Request {
	t.Helper()
	var req *http.Request
	_, err := r.underCaller(t, func(ctx context.Context) error {
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// tree renders the ended spans as "who <- parent" lines in the order they
// started, naming each by its scope and, for steady's, its resend count.
func tree(spans []sdktrace.ReadOnlySpan) []string {
	spans = slices.Clone(spans)
	slices.SortStableFunc(spans, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	label := map[trace.SpanID]string{}
	name := func(s sdktrace.ReadOnlySpan) string {
		scope := s.InstrumentationScope().Name
		switch scope {
		case otelsteady.ScopeName:
			for _, kv := range s.Attributes() {
				if kv.Key == "http.request.resend_count" {
					return fmt.Sprintf("steady attempt (resend %d)", kv.Value.AsInt64())
				}
			}
			return "steady attempt"
		case "caller":
			return "caller"
		}
		return "otelhttp " + s.SpanKind().String()
	}
	for _, s := range spans {
		label[s.SpanContext().SpanID()] = name(s)
	}
	var out []string
	for _, s := range spans {
		parent := "(root)"
		if s.Parent().IsValid() {
			parent = label[s.Parent().SpanID()]
		}
		out = append(out, name(s)+" <- "+parent)
	}
	return out
}

// TestBelowOtelhttp: steady above otelhttp (otelhttp wraps the transport
// steady retries through). Each of steady's attempt spans is the parent of
// otelhttp's client span for it, whose propagated context parents the
// server's span: one trace from the caller to the server.
func TestBelowOtelhttp(t *testing.T) {
	r := newRig(t)
	srv := server(t, r)
	inner := otelhttp.NewTransport(srv.Client().Transport,
		otelhttp.WithTracerProvider(r.tp), otelhttp.WithPropagators(propagation.TraceContext{}))
	rt := retry.New(inner, retry.Policy{Reporter: r.adapter, InitialBackoff: 1e6, Rand: constRand(0.5)})
	r.fetch(t, &http.Client{Transport: rt}, srv.URL+"/items")
	diff(t, "span tree", tree(r.spans.Ended()), []string{
		"caller <- (root)",
		"steady attempt <- caller",
		"otelhttp client <- steady attempt",
		"otelhttp server <- otelhttp client",
		"steady attempt (resend 1) <- caller",
		"otelhttp client <- steady attempt (resend 1)",
		"otelhttp server <- otelhttp client",
	})
	r.sameTrace(t)
}

// TestAboveOtelhttp: otelhttp above steady (otelhttp wraps steady's
// transport). otelhttp's one span is the logical request; steady's attempt
// spans are its children; the server's spans are children of otelhttp's,
// whose context it propagated before steady re-sent.
func TestAboveOtelhttp(t *testing.T) {
	r := newRig(t)
	srv := server(t, r)
	rt := otelhttp.NewTransport(
		retry.New(srv.Client().Transport, retry.Policy{Reporter: r.adapter, InitialBackoff: 1e6, Rand: constRand(0.5)}),
		otelhttp.WithTracerProvider(r.tp), otelhttp.WithPropagators(propagation.TraceContext{}))
	r.fetch(t, &http.Client{Transport: rt}, srv.URL+"/items")
	diff(t, "span tree", tree(r.spans.Ended()), []string{
		"caller <- (root)",
		"otelhttp client <- caller",
		"steady attempt <- otelhttp client",
		"otelhttp server <- otelhttp client",
		"steady attempt (resend 1) <- otelhttp client",
		"otelhttp server <- otelhttp client",
	})
	r.sameTrace(t)
}

// TestPropagatingBelowTheClient: the client's bottom transport writes each
// attempt's trace context into its headers, so the server's spans hang
// under steady's attempt spans, with no second client span; the caller's
// request keeps its headers.
func TestPropagatingBelowTheClient(t *testing.T) {
	r := newRig(t)
	srv := server(t, r)
	c, err := steady.New(steady.Options{BaseURL: srv.URL, Reporter: r.adapter,
		Transport: otelsteady.Propagating(srv.Client().Transport, propagation.TraceContext{}),
		Policy:    retry.Policy{InitialBackoff: 1e6}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	req := r.fetch(t, c, srv.URL+"/items")
	if len(req.Header) != 0 {
		t.Errorf("the caller's request gained headers: %v", req.Header)
	}
	diff(t, "span tree", tree(r.spans.Ended()), []string{
		"caller <- (root)",
		"steady attempt <- caller",
		"otelhttp server <- steady attempt",
		"steady attempt (resend 1) <- caller",
		"otelhttp server <- steady attempt (resend 1)",
	})
	r.sameTrace(t)
}

// TestPropagatingWithoutATrace: no span in the context, nothing to write:
// the request goes through as it came.
func TestPropagatingWithoutATrace(t *testing.T) {
	var got *http.Request
	rt := otelsteady.Propagating(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r
		return respond(r, 200, nil, ""), nil
	}), propagation.TraceContext{})
	req, _ := http.NewRequest(http.MethodGet, "https://api.example.gov/", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != req {
		t.Error("a request with nothing to propagate was copied")
	}
}

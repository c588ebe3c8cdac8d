package otelsteady_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/otelsteady"
	"github.com/steadyhttp/steady/retry"
)

// rig is an adapter recording to an in-memory span recorder and a manual
// metric reader.
type rig struct {
	spans   *tracetest.SpanRecorder
	reader  *sdkmetric.ManualReader
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
	adapter *otelsteady.Adapter
}

func newRig(t *testing.T, keys ...credentials.Key) *rig {
	t.Helper()
	// The watch's check runs after every cleanup below (cleanups run
	// last-in first-out), so it sees the telemetry as recorded in the end.
	w := wiretest.For(t)
	w.Key(apiKey)
	w.Key(keys...)
	r := &rig{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	a, err := otelsteady.New(otelsteady.Options{TracerProvider: r.tp, MeterProvider: r.mp, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	r.adapter = a
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = r.mp.Shutdown(context.Background())
	})
	// Runs first: the recorded telemetry goes to the watch, which looks
	// for every key in every form a redactor knows (escaped, in base64).
	t.Cleanup(func() { w.Text("telemetry", r.recordedText(t)) })
	return r
}

// caller starts the caller's own span, as an instrumented handler would.
func (r *rig) caller(ctx context.Context) (context.Context, trace.Span) {
	return r.tp.Tracer("caller").Start(ctx, "caller")
}

// underCaller runs call under the caller's span, which ends when call
// returns, and returns when the span started (the origin of spanText's
// times) and call's error.
func (r *rig) underCaller(t *testing.T, call func(context.Context) error) (time.Time, error) {
	t0 := time.Now()
	ctx, span := r.caller(t.Context())
	defer span.End()
	return t0, call(ctx)
}

// getItems GETs items once, under the caller's span, through a client on
// bottom with policy p.
func (r *rig) getItems(t *testing.T, bottom http.RoundTripper, p retry.Policy) (time.Time, error) {
	t.Helper()
	c := client(t, r, bottom, p)
	return r.underCaller(t, func(ctx context.Context) error { return c.GetJSON(ctx, "items", nil, new(any)) })
}

// spanText renders every ended span, in the order they ended unless
// sorted, one line each: name, kind, parent's name, start and end as
// offsets from t0, status, attributes in key order, then events. Exact
// comparisons of these lines are the spans' test.
func (r *rig) spanText(t0 time.Time) []string {
	ended := r.spans.Ended()
	names := map[trace.SpanID]string{}
	for _, s := range ended {
		names[s.SpanContext().SpanID()] = s.Name()
	}
	var out []string
	for _, s := range ended {
		parent := "-"
		if s.Parent().IsValid() {
			parent = names[s.Parent().SpanID()]
			if parent == "" {
				parent = "?"
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s parent=%s +%v..+%v %s", s.Name(), s.SpanKind(), parent,
			s.StartTime().Sub(t0), s.EndTime().Sub(t0), s.Status().Code)
		if d := s.Status().Description; d != "" {
			fmt.Fprintf(&b, " %q", d)
		}
		b.WriteString(" " + attrText(s.Attributes()))
		for _, e := range s.Events() {
			fmt.Fprintf(&b, " %s@+%v%s", e.Name, e.Time.Sub(t0), attrText(e.Attributes))
		}
		out = append(out, b.String())
	}
	return out
}

func attrText(kv []attribute.KeyValue) string {
	kv = slices.Clone(kv)
	slices.SortFunc(kv, func(a, b attribute.KeyValue) int { return strings.Compare(string(a.Key), string(b.Key)) })
	parts := make([]string, len(kv))
	for i, a := range kv {
		parts[i] = string(a.Key) + "=" + a.Value.String()
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// metricText renders every data point the reader collects, sorted: the
// instrument, its attributes, and the value (for a histogram, count and
// sum).
func (r *rig) metricText(t *testing.T) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s%s = %d", m.Name, attrText(p.Attributes.ToSlice()), p.Value))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s%s count=%d sum=%g", m.Name, attrText(p.Attributes.ToSlice()), p.Count, p.Sum))
				}
			default:
				t.Fatalf("unexpected data %T for %s", d, m.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// sameTrace fails unless every ended span belongs to one trace.
func (r *rig) sameTrace(t *testing.T) {
	t.Helper()
	ended := r.spans.Ended()
	for _, s := range ended {
		if s.SpanContext().TraceID() != ended[0].SpanContext().TraceID() {
			t.Errorf("span %s is in trace %s, not %s", s.Name(), s.SpanContext().TraceID(), ended[0].SpanContext().TraceID())
		}
	}
}

func diff(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("%s:\ngot:\n\t%s\nwant:\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
}

// roundTripFunc is a fake transport at the bottom of the stack.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// scripted answers the n-th request (0-based) with codes[min(n, len-1)],
// each taking took of (virtual) time, and headers when the code is not 200.
type scripted struct {
	mu     sync.Mutex
	n      int
	codes  []int
	took   time.Duration
	header http.Header
}

func (s *scripted) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	code := s.codes[min(s.n, len(s.codes)-1)]
	s.n++
	s.mu.Unlock()
	if s.took > 0 {
		select {
		case <-time.After(s.took):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return respond(r, code, s.header, "[]"), nil
}

func respond(r *http.Request, code int, h http.Header, body string) *http.Response {
	hdr := http.Header{}
	if code != 200 {
		for k, v := range h {
			hdr[k] = v
		}
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: hdr, Request: r,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}

func constRand(v float64) func() float64 { return func() float64 { return v } }

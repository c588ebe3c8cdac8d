package otelsteady_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/otelsteady"
	"github.com/steadyhttp/steady/retry"
)

// benchRig returns SDK providers, shut down when b ends, and a bottom
// transport that answers 200 at once, with a fresh response each time, as
// a real transport gives: otelhttp wraps the body it is handed.
func benchRig(b *testing.B) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider, http.RoundTripper) {
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	header := http.Header{}
	return tp, mp, roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: header, Body: http.NoBody, Request: r}, nil
	})
}

// BenchmarkSuccess is the cost of one successful request through the
// retrying transport: without telemetry, with otelhttp's span over it, and
// with the adapter, on the same SDK providers and a bottom transport that
// answers at once, so the difference is the telemetry's. The three run as
// sub-benchmarks of one function, so -count interleaves them; compare
// medians (the README gives the command and figures).
func BenchmarkSuccess(b *testing.B) {
	tp, mp, bottom := benchRig(b)
	adapter, err := otelsteady.New(otelsteady.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	stacks := []struct {
		name string
		rt   http.RoundTripper
	}{
		{"off", retry.New(bottom, retry.Policy{})},
		{"otelhttp", otelhttp.NewTransport(retry.New(bottom, retry.Policy{}),
			otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp))},
		{"adapter", retry.New(bottom, retry.Policy{Reporter: adapter})},
	}
	req, _ := http.NewRequest(http.MethodGet, "https://api.example.gov/items?page=2", nil)
	for _, s := range stacks {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := s.rt.RoundTrip(req)
				if err != nil || r.StatusCode != 200 {
					b.Fatal(r, err)
				}
				r.Body.Close()
			}
		})
	}
}

// BenchmarkSuccessWithKeys is BenchmarkSuccess's adapter stack with a key
// given to the adapter, whose value every recorded URL is searched for.
func BenchmarkSuccessWithKeys(b *testing.B) {
	tp, mp, bottom := benchRig(b)
	adapter, err := otelsteady.New(otelsteady.Options{TracerProvider: tp, MeterProvider: mp,
		Keys: []credentials.Key{{Header: "X-Api-Key", Value: "k-3f9a0c/+="}}})
	if err != nil {
		b.Fatal(err)
	}
	rt := retry.New(bottom, retry.Policy{Reporter: adapter})
	req, _ := http.NewRequest(http.MethodGet, "https://api.example.gov/items?page=2", nil)
	b.ReportAllocs()
	for b.Loop() {
		r, err := rt.RoundTrip(req)
		if err != nil || r.StatusCode != 200 {
			b.Fatal(r, err)
		}
		r.Body.Close()
	}
}

// BenchmarkEventMetrics is the cost of the measurements of the events
// other than an attempt's start and end (a re-send, a stop, a page, a
// pacing hold), outside any span, so that only the metrics are measured:
// each records with an attribute set built once per host and reason.
func BenchmarkEventMetrics(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	a, err := otelsteady.New(otelsteady.Options{TracerProvider: noop.NewTracerProvider(), MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	at := event.Event{Host: "api.example.gov", URL: "https://api.example.gov/items", Context: context.Background(), Time: time.Now()}
	with := func(f func(*event.Event)) event.Event { e := at; f(&e); return e }
	for _, c := range []struct {
		name string
		e    event.Event
	}{
		{"resend", with(func(e *event.Event) {
			e.Kind, e.Status, e.Reason, e.Wait = event.RetryScheduled, 503, event.WaitBackoff, time.Second
		})},
		{"stop", with(func(e *event.Event) { e.Kind, e.Stop = event.Stopped, retry.ErrBudget })},
		{"page", with(func(e *event.Event) { e.Kind, e.Items = event.PageReceived, 3 })},
		{"hold", with(func(e *event.Event) {
			e.Kind, e.Reason, e.Wait = event.Waiting, event.WaitRateLimited, time.Second
		})},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a.Report(c.e)
			}
		})
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/otelsteady"
)

// telemetryShutdown bounds the flush of what is left to export when the
// command ends: a collector that is slow or gone never holds the exit
// longer (ADR 0310).
const telemetryShutdown = 5 * time.Second

// telemetry exports a run's spans and metrics over OTLP/HTTP when the
// standard OpenTelemetry variables ask for it. A run is one trace: the
// command's root span, and under it otelsteady's span for every attempt.
// A nil *telemetry exports nothing, and all its methods may be called.
type telemetry struct {
	tp   *sdktrace.TracerProvider // nil: no traces
	mp   *sdkmetric.MeterProvider // nil: no metrics
	root trace.Span

	mu      sync.Mutex
	secrets []string // the keys' values, kept out of the root span's status
	failed  error    // the first export failure, told once at the end
}

// The variables read here; the exporters and the SDK read the rest
// (OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, ...).
const (
	envDisabled        = "OTEL_SDK_DISABLED"
	envEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	envTracesExporter  = "OTEL_TRACES_EXPORTER"
	envMetricsExporter = "OTEL_METRICS_EXPORTER"
	envProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
)

// telemetryWanted says which signals the environment asks to export: a
// signal is exported only when an OTLP endpoint is named for it (the
// general one or its own), the SDK is not disabled and its exporter is not
// "none". Without an endpoint nothing is exported, not even to the
// exporters' default of localhost:4318, so a run that never asked for
// telemetry dials nothing.
func telemetryWanted(lookup func(string) (string, bool)) (traces, metrics bool) {
	get := func(name string) string { v, _ := lookup(name); return strings.TrimSpace(v) }
	if strings.EqualFold(get(envDisabled), "true") {
		return false, false
	}
	general := get(envEndpoint) != ""
	traces = (general || get(envTracesEndpoint) != "") && !strings.EqualFold(get(envTracesExporter), "none")
	metrics = (general || get(envMetricsEndpoint) != "") && !strings.EqualFold(get(envMetricsExporter), "none")
	return traces, metrics
}

// startTelemetry makes the exporters the environment asks for and starts
// the run's root span in cmd's context. It returns nil when nothing is to
// be exported. A setting the exporters refuse is told on stderr and the
// run goes on without telemetry: it never fails a harvest.
func startTelemetry(cmd *cobra.Command, stderr io.Writer) *telemetry {
	switch cmd.Name() {
	case "get", "harvest", "demo":
	default:
		return nil
	}
	traces, metrics := telemetryWanted(os.LookupEnv)
	if !traces && !metrics {
		return nil
	}
	if p := strings.TrimSpace(os.Getenv(envProtocol)); p != "" && p != "http/protobuf" {
		fmt.Fprintf(stderr, "steady: telemetry: %s=%s is not supported, only http/protobuf; nothing is exported\n", envProtocol, p)
		return nil
	}
	t := &telemetry{}
	if err := t.start(cmd.Context(), traces, metrics); err != nil {
		fmt.Fprintf(stderr, "steady: telemetry: %s; nothing is exported\n", oneLine(err))
		t.shutdown()
		return nil
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(t.exportFailed))
	ctx, root := t.tracerProvider().Tracer(otelsteady.ScopeName).Start(cmd.Context(), "steady "+cmd.Name(),
		trace.WithSpanKind(trace.SpanKindInternal))
	t.root = root
	cmd.SetContext(ctx)
	return t
}

// start makes the providers, each with its OTLP/HTTP exporter. Making an
// exporter dials nothing; the first export does.
func (t *telemetry) start(ctx context.Context, traces, metrics bool) error {
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "steady"),
			attribute.String("service.version", readBuildInfo().version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv()) // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	if err != nil {
		return err
	}
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return err
		}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return err
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
	}
	return nil
}

// tracerProvider is the provider of the spans, a no-op one when only
// metrics are exported.
func (t *telemetry) tracerProvider() trace.TracerProvider {
	if t.tp == nil {
		return tracenoop.NewTracerProvider()
	}
	return t.tp
}

// reporter returns the adapter that records a client's events, told the
// client's keys so that none of them is recorded; nil when nothing is
// exported, so event.Multi leaves the renderer alone.
func (t *telemetry) reporter(keys []credentials.Key) event.Reporter {
	if t == nil {
		return nil
	}
	opt := otelsteady.Options{TracerProvider: t.tracerProvider(), Keys: keys}
	if t.mp != nil {
		opt.MeterProvider = t.mp
	} else {
		opt.MeterProvider = metricnoop.NewMeterProvider()
	}
	a, err := otelsteady.New(opt)
	if err != nil {
		t.exportFailed(err)
		return nil
	}
	t.mu.Lock()
	for _, k := range keys {
		if k.Value != "" {
			t.secrets = append(t.secrets, k.Value)
		}
	}
	t.mu.Unlock()
	return a
}

// exportFailed keeps the first failure the SDK reports, to tell it once
// when the run ends instead of between the renderer's lines.
func (t *telemetry) exportFailed(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed == nil {
		t.failed = err
	}
}

// finish ends the root span with the run's exit code and message, then
// flushes and shuts the providers down, within telemetryShutdown. An
// export that failed is told on stderr in one line.
func (t *telemetry) finish(stderr io.Writer, code int, msg string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	redact := credentials.NewRedactor(t.secrets...)
	t.mu.Unlock()
	t.root.SetAttributes(attribute.Int("process.exit.code", code))
	if code != exitOK {
		t.root.SetStatus(codes.Error, redact.String(msg))
	}
	t.root.End()
	errs := t.shutdown()
	t.mu.Lock()
	if t.failed != nil {
		errs = append([]error{t.failed}, errs...)
	}
	t.mu.Unlock()
	if len(errs) > 0 {
		texts := make([]string, len(errs))
		for i, err := range errs {
			texts[i] = redact.String(oneLine(err))
		}
		fmt.Fprintf(stderr, "steady: telemetry not delivered: %s\n", strings.Join(texts, "; "))
	}
}

// shutdown flushes and stops both providers at once, under one bound, and
// returns what failed.
func (t *telemetry) shutdown() []error {
	ctx, cancel := context.WithTimeout(context.Background(), telemetryShutdown)
	defer cancel()
	var wg sync.WaitGroup
	var terr, merr error
	if t.tp != nil {
		wg.Go(func() { terr = t.tp.Shutdown(ctx) })
	}
	if t.mp != nil {
		wg.Go(func() { merr = t.mp.Shutdown(ctx) })
	}
	wg.Wait()
	var errs []error
	for _, err := range []error{terr, merr} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

package otelsteady

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
)

// clientKind is made once: each option built per span is an allocation.
var clientKind = trace.WithSpanKind(trace.SpanKindClient)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/steadyhttp/steady/otelsteady"

// Options configure an [Adapter]. The zero value records to the global
// providers.
type Options struct {
	// TracerProvider makes the attempt spans (nil: the global one).
	TracerProvider trace.TracerProvider
	// MeterProvider makes the instruments (nil: the global one).
	MeterProvider metric.MeterProvider
	// Keys are the keys the client was given. Their values are replaced by
	// REDACTED in every text the adapter records (URLs, error texts), as
	// written and query- or path-escaped, whatever parameter carried them:
	// the events' URLs are already redacted by parameter name, and this
	// catches a key sent under a name that does not look like one. Give
	// the same slice as steady.Options.Keys.
	Keys []credentials.Key
}

// An Adapter turns steady's events into spans and metrics. It is a
// [event.Tracer]: give it as the client's Reporter (alone, or with a
// renderer through [event.Multi]), and each attempt is sent with its
// span in the request's context. It is safe for concurrent use.
type Adapter struct {
	tracer trace.Tracer
	m      instruments
	// redact replaces the keys' values, nil without keys. It is made once:
	// making one escapes every value and builds a replacer, which
	// credentials.Redact would do again for every text.
	redact *credentials.Redactor
}

var _ event.Tracer = (*Adapter)(nil)

// New returns an adapter for opt. It fails only when the meter provider
// refuses an instrument.
func New(opt Options) (*Adapter, error) {
	tp := opt.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := opt.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	a := &Adapter{tracer: tp.Tracer(ScopeName)}
	if err := a.m.init(mp.Meter(ScopeName)); err != nil {
		return nil, fmt.Errorf("otelsteady: %w", err)
	}
	var secrets []string
	for _, k := range opt.Keys {
		if k.Value == "" {
			continue
		}
		secrets = append(secrets, k.Value)
		if esc := url.QueryEscape(k.Value); esc != k.Value {
			secrets = append(secrets, esc)
		}
		if esc := url.PathEscape(k.Value); esc != k.Value {
			secrets = append(secrets, esc)
		}
	}
	a.redact = credentials.NewRedactor(secrets...)
	return a, nil
}

// StartAttempt starts the span of one attempt, a client span under the span
// in e.Context, and returns the context that carries it.
func (a *Adapter) StartAttempt(e event.Event) context.Context {
	ctx := e.Context
	if ctx == nil {
		ctx = context.Background()
	}
	host, port := hostPort(e.Host, e.URL)
	method, original := normalMethod(e.Method)
	resend := e.Attempt > 1
	a.m.attempts.Add(ctx, 1, a.m.attemptSet(host, method, resend).add...)

	// At most six: the method and its original, the address and port,
	// the URL and the resend count. The array escapes with the option.
	var kv [6]attribute.KeyValue
	n := 0
	add := func(v attribute.KeyValue) { kv[n] = v; n++ }
	add(method)
	if original != "" {
		add(semconv.HTTPRequestMethodOriginal(original))
	}
	add(semconv.ServerAddress(host))
	if port > 0 {
		add(semconv.ServerPort(port))
	}
	add(semconv.URLFull(a.cleanURL(e.URL)))
	if resend {
		add(semconv.HTTPRequestResendCount(e.Attempt - 1))
	}
	// The span's times are the SDK's clock, read as the events are made:
	// passing the events' own stamps would cost an allocation each.
	ctx, span := a.tracer.Start(ctx, spanName(method, original), clientKind, trace.WithAttributes(kv[:n]...))
	return context.WithValue(ctx, attemptKey{}, span)
}

// attemptKey marks a context as an attempt's and holds its span, so that a
// caller's own span, carried by the events between attempts, is never ended
// here.
type attemptKey struct{}

func attemptSpan(ctx context.Context) (trace.Span, bool) {
	s, ok := ctx.Value(attemptKey{}).(trace.Span)
	return s, ok
}

// Report records e: it ends the attempt's span with its outcome, adds the
// waits, stops and quotas to the spans they belong to, and counts.
func (a *Adapter) Report(e event.Event) {
	ctx := e.Context
	if ctx == nil {
		ctx = context.Background()
	}
	switch e.Kind {
	case event.RetryScheduled:
		reason := waitReason(e.Reason)
		host, _ := hostPort(e.Host, e.URL)
		a.m.resends.Add(ctx, 1, a.m.resendSet(host, errorType(e), reason).add...)
		a.m.waits.Record(ctx, e.Wait.Seconds(), a.m.waitSet(host, reason).rec...)
		span, ok := attemptSpan(ctx)
		if !ok {
			return
		}
		a.outcome(span, e)
		waitEvent(span, e, reason)
		span.End()

	case event.Waiting:
		reason := waitReason(e.Reason)
		host, _ := hostPort(e.Host, e.URL)
		a.m.waits.Record(ctx, e.Wait.Seconds(), a.m.waitSet(host, reason).rec...)
		if reason == WaitPacing {
			a.m.holds.Add(ctx, 1, a.m.hostSet(host).add...)
		}
		// Before its attempt: the wait belongs to the request's span.
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			waitEvent(span, e, reason)
		}

	case event.RequestFinished:
		span, ok := attemptSpan(ctx)
		if !ok {
			return
		}
		if e.Quota {
			quotaEvent(span, e)
		}
		a.outcome(span, e)
		span.End()

	case event.Stopped:
		reason := stopReason(e.Stop)
		host, _ := hostPort(e.Host, e.URL)
		a.m.stops.Add(ctx, 1, a.m.stopSet(host, reason).add...)
		if reason == StopBudget {
			a.m.refusals.Add(ctx, 1, a.m.hostSet(host).add...)
		}
		// A stop between attempts (cancelled during a backoff, a pacing
		// hold refused) is told to the request's span, which is not ours
		// to end.
		span, own := attemptSpan(ctx)
		if !own {
			span = trace.SpanFromContext(ctx)
		}
		if !span.IsRecording() {
			return
		}
		attrs := []attribute.KeyValue{attribute.String(KeyStopReason, reason)}
		if e.Wait > 0 {
			attrs = append(attrs, attribute.Float64(KeyWaitDuration, e.Wait.Seconds()))
		}
		span.AddEvent(EventStop, trace.WithTimestamp(stamp(e.Time)), trace.WithAttributes(attrs...))
		if own {
			a.outcome(span, e)
			span.End()
		}

	case event.QuotaSeen:
		if span, ok := attemptSpan(ctx); ok {
			quotaEvent(span, e)
		}

	case event.PageReceived:
		host, _ := hostPort(e.Host, e.URL)
		set := a.m.hostSet(host)
		a.m.pages.Add(ctx, 1, set.add...)
		a.m.rows.Add(ctx, e.Items, set.add...)

	case event.SubrequestDone:
		a.m.subrequests.Add(ctx, 1)

	case event.Parked:
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.AddEvent(EventPark, trace.WithTimestamp(stamp(e.Time)), trace.WithAttributes(
				attribute.String(KeyParkMode, e.Reason), attribute.Float64(KeyWaitDuration, e.Wait.Seconds())))
		}

	case event.BreakerChanged:
		state := breakerState(e.Reason)
		host, _ := hostPort(e.Host, e.URL)
		a.m.breaker.Add(ctx, 1, a.m.breakerSet(host, state).add...)
		// The breaker changes between calls; a context is there only
		// when the event was made for one.
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.AddEvent(EventBreaker, trace.WithTimestamp(stamp(e.Time)), trace.WithAttributes(
				attribute.String(KeyBreakerState, state), attribute.Float64(KeyWaitDuration, e.Wait.Seconds())))
		}
	}
}

// outcome sets what an attempt ended with: its status, or the class of
// the failure without one.
func (a *Adapter) outcome(span trace.Span, e event.Event) {
	if e.Status != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(e.Status))
		if e.Status >= 400 {
			span.SetAttributes(errorType(e))
			span.SetStatus(codes.Error, "")
		}
		return
	}
	if e.ErrClass != "" || e.Err != "" || e.Stop != nil {
		span.SetAttributes(errorType(e))
		desc := e.Err
		if desc == "" {
			desc = e.Reason
		}
		span.SetStatus(codes.Error, a.cleanText(desc))
	}
}

// stamp keeps a zero time (an event made by hand) from becoming year 1.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

func errorType(e event.Event) attribute.KeyValue {
	switch {
	case e.Status >= 400:
		return semconv.ErrorTypeKey.String(strconv.Itoa(e.Status))
	case e.ErrClass != "":
		return semconv.ErrorTypeKey.String(e.ErrClass)
	case e.Stop != nil && !errors.Is(e.Stop, context.Canceled):
		return semconv.ErrorTypeKey.String(stopReason(e.Stop))
	case e.Stop != nil:
		return semconv.ErrorTypeKey.String(StopCanceled)
	}
	return semconv.ErrorTypeOther
}

// waitEvent adds the wait e tells, with its reason as recorded, to span.
func waitEvent(span trace.Span, e event.Event, reason string) {
	span.AddEvent(EventWait, trace.WithTimestamp(stamp(e.Time)), trace.WithAttributes(
		attribute.String(KeyWaitReason, reason), attribute.Float64(KeyWaitDuration, e.Wait.Seconds())))
}

// quotaEvent adds the quota e tells to its attempt's span.
func quotaEvent(span trace.Span, e event.Event) {
	span.AddEvent(EventQuota, trace.WithTimestamp(stamp(e.Time)), trace.WithAttributes(
		attribute.Int64(KeyQuotaRemaining, e.Remaining), attribute.Float64(KeyQuotaReset, e.Reset.Seconds())))
}

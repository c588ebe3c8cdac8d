package event_test

import (
	"context"
	"testing"

	"github.com/steadyhttp/steady/event"
)

type stepKey struct{}

// appendTracer derives an attempt context that appends its name to the
// chain found in the context it is given, and counts what it is reported.
type appendTracer struct {
	name    string
	reports int
}

func (a *appendTracer) Report(event.Event) { a.reports++ }

func (a *appendTracer) StartAttempt(e event.Event) context.Context {
	chain, _ := e.Context.Value(stepKey{}).(string)
	return context.WithValue(e.Context, stepKey{}, chain+a.name)
}

// TestMultiChainsTracers: Multi is a Tracer when one of its reporters is,
// each tracer deriving from the context the one before returned, and every
// reporter, tracer or not, still gets every event.
func TestMultiChainsTracers(t *testing.T) {
	a, b := &appendTracer{name: "a"}, &appendTracer{name: "b"}
	plain := 0
	r := event.Multi(a, event.ReporterFunc(func(event.Event) { plain++ }), nil, b)
	tr, ok := r.(event.Tracer)
	if !ok {
		t.Fatal("Multi of tracers is not a Tracer")
	}
	ctx := tr.StartAttempt(event.Event{Kind: event.AttemptStarted, Context: t.Context()})
	if got := ctx.Value(stepKey{}); got != "ab" {
		t.Errorf("attempt context chain = %v, want ab", got)
	}
	r.Report(event.Event{Kind: event.RequestStarted})
	if a.reports != 1 || b.reports != 1 || plain != 1 {
		t.Errorf("reports a=%d b=%d plain=%d, want 1 each", a.reports, b.reports, plain)
	}
	if _, ok := event.Multi(event.ReporterFunc(func(event.Event) {}), event.ReporterFunc(func(event.Event) {})).(event.Tracer); ok {
		t.Error("Multi without a tracer claims to be one")
	}
	if event.AttemptStarted.String() != "attempt started" {
		t.Errorf("AttemptStarted.String() = %q", event.AttemptStarted.String())
	}
}

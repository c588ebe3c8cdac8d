package steady

import (
	"context"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
)

// redactReporter returns next behind the client's redactor: every text of
// every event, whichever layer sent it, has the client's secrets replaced
// and server-supplied control characters escaped before a renderer, a
// logger or a tracer sees it. The layers already redact URLs by parameter
// name; this is the check by value, done once for all of them. A
// [event.Tracer] stays one. A nil next stays nil.
func redactReporter(next event.Reporter, red *credentials.Redactor) event.Reporter {
	switch r := next.(type) {
	case nil:
		return nil
	case *redacting:
		if r.red == red {
			return r
		}
	case *redactingTracer:
		if r.red == red {
			return r
		}
	}
	w := &redacting{next: next, red: red}
	if t, ok := next.(event.Tracer); ok {
		return &redactingTracer{redacting: w, tracer: t}
	}
	return w
}

type redacting struct {
	next event.Reporter
	red  *credentials.Redactor
}

func (r *redacting) Report(e event.Event) { r.next.Report(r.clean(e)) }

// clean returns e with its texts redacted and escaped.
func (r *redacting) clean(e event.Event) event.Event {
	e.URL = r.red.Text(e.URL)
	e.Host = r.red.Text(e.Host)
	e.Method = r.red.Text(e.Method)
	e.Err = r.red.Text(e.Err)
	e.Reason = r.red.Text(e.Reason)
	e.ErrClass = r.red.Text(e.ErrClass)
	return e
}

type redactingTracer struct {
	*redacting
	tracer event.Tracer
}

func (r *redactingTracer) StartAttempt(e event.Event) context.Context {
	return r.tracer.StartAttempt(r.clean(e))
}

package otelsteady_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/otelsteady"
	"github.com/steadyhttp/steady/retry"
)

// A call that needs a re-send: two attempt spans under the caller's span,
// the first with the wait that followed it.
func Example() {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())
	adapter, err := otelsteady.New(otelsteady.Options{TracerProvider: tp})
	if err != nil {
		fmt.Println(err)
		return
	}
	client, err := steady.New(steady.Options{BaseURL: srv.URL, Reporter: adapter,
		Policy: retry.Policy{InitialBackoff: time.Millisecond}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.CloseIdleConnections()

	ctx, span := tp.Tracer("app").Start(context.Background(), "sync lakes")
	var v struct{ OK bool }
	err = client.GetJSON(ctx, "lakes", nil, &v)
	span.End()
	fmt.Println("ok:", v.OK, err)

	for _, s := range spans.Ended() {
		line := s.Name()
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "http.response.status_code", "http.request.resend_count":
				line += fmt.Sprintf(" %s=%s", kv.Key, kv.Value.String())
			}
		}
		for _, e := range s.Events() {
			for _, kv := range e.Attributes {
				if kv.Key == otelsteady.KeyWaitReason {
					line += " then " + e.Name + " (" + kv.Value.AsString() + ")"
				}
			}
		}
		fmt.Println(line)
	}
	// Output:
	// ok: true <nil>
	// GET http.response.status_code=503 then steady.wait (backoff)
	// GET http.request.resend_count=1 http.response.status_code=200
	// sync lakes
}

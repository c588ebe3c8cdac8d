package liveness_test

import (
	"context"
	"testing"

	"github.com/steadyhttp/steady/liveness"
)

// The retrying transport asks for the body limit on every call, through
// whatever contexts the caller and net/http wrapped around it: the answer
// comes through them, the contexts below still answer their own keys, and
// the lookup allocates nothing.
func TestBodyInAttemptThroughWrappedContexts(t *testing.T) {
	type other struct{}
	ctx := context.WithValue(context.Background(), other{}, "x")
	ctx = liveness.WithBodyInAttempt(ctx, 10<<20)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx = context.WithValue(ctx, struct{ other }{}, "y")
	if got, ok := liveness.BodyInAttempt(ctx); !ok || got != 10<<20 {
		t.Fatalf("BodyInAttempt = %d, %v; want %d, true", got, ok, 10<<20)
	}
	if v := ctx.Value(other{}); v != "x" {
		t.Errorf("the context below answers %v, want x", v)
	}
	if n := testing.AllocsPerRun(100, func() { liveness.BodyInAttempt(ctx) }); n != 0 {
		t.Errorf("BodyInAttempt allocates %v times a lookup", n)
	}
}

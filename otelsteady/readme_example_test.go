package otelsteady_test

import (
	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/otelsteady"
)

// readmeTracing holds the README's tracing snippet verbatim, so that it
// compiles; the root package's TestREADMESnippetsAreHeld finds it here.
func readmeTracing(keys []credentials.Key) error {
	adapter, err := otelsteady.New(otelsteady.Options{Keys: keys}) // global providers unless given
	if err != nil {
		return err
	}
	client, err := steady.New(steady.Options{Keys: keys, Reporter: adapter})
	_ = client
	return err
}

var _ = readmeTracing

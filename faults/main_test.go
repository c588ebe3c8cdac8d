package faults_test

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines after the tests and after the
// toxiproxy process is stopped, so neither a goroutine nor the process
// outlives the run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(withToxiproxy{m}) }

// withToxiproxy runs the tests, then stops the toxiproxy server if a test
// started it.
type withToxiproxy struct{ m *testing.M }

func (w withToxiproxy) Run() int {
	code := w.m.Run()
	removeGenerated()
	if toxi != nil {
		if err := toxi.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			code = max(code, 1)
		}
	}
	// The toxiproxy client talks to its API through the default transport;
	// its idle connections would otherwise count as leaked goroutines.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	return code
}

package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/steadyhttp/steady/internal/wiretest"
)

func TestMain(m *testing.M) {
	// The end-to-end tests run the built program; build it once here.
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	// wiretest.Main fails the run if a key reached a foreign origin or a
	// secret reached a text, as goleak does for goroutines.
	code := wiretest.Main(m).Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			return 1
		}
	}
	return code
}

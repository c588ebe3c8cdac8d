package otelsteady_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/steadyhttp/steady/internal/wiretest"
)

// wiretest.Main fails the run if a key reached a foreign origin or a
// secret reached a text in any test, as goleak does for goroutines.
func TestMain(m *testing.M) { goleak.VerifyTestMain(wiretest.Main(m)) }

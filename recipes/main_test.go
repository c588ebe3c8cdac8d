package recipes_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/steadyhttp/steady/internal/wiretest"
)

// TestMain fails the run for a goroutine left behind and for a key the
// watch saw leave its host or reach a text.
func TestMain(m *testing.M) { goleak.VerifyTestMain(wiretest.Main(m)) }

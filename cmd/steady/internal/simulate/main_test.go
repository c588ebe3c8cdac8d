package simulate

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/steadyhttp/steady/internal/wiretest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(wiretest.Main(m)) }

package simulate

import (
	"os"
	"testing"
)

// fullEnv names the environment variable that runs the goal tests at the
// size the tables in the decision records quote: 100 trials of the study at
// every contention level, and the outage with 1,000 clients under all four
// policies. Under the race detector that takes minutes, so by default the
// goals are checked at a size that keeps the package's tests well under
// half a minute while still measuring the same thing (see decision record
// 108):
//
//	STEADY_SIM_FULL=1 go -C cmd/steady test -run Goal -v ./internal/simulate/
const fullEnv = "STEADY_SIM_FULL"

// fullSize reports whether the goal tests run at full size. Only tests read
// the variable; the package itself never does.
func fullSize() bool { return os.Getenv(fullEnv) == "1" }

// skipGoalIfShort skips a goal test under -short at either size.
func skipGoalIfShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a goal test; run without -short")
	}
}

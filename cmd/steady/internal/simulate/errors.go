package simulate

import "fmt"

// ConfigError names a field of a scenario's configuration that cannot be
// simulated, and why.
type ConfigError struct {
	Scenario string // "contention" or "outage"
	Field    string
	Problem  string
	Err      error // the cause, when a policy failed its own validation
}

func (e *ConfigError) Error() string {
	msg := fmt.Sprintf("simulate: %s: %s %s", e.Scenario, e.Field, e.Problem)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *ConfigError) Unwrap() error { return e.Err }

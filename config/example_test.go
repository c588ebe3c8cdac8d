package config_test

import (
	"errors"
	"fmt"

	"github.com/steadyhttp/steady/config"
)

func ExampleFromLookup() {
	vars := map[string]string{
		"STEADY_RETRIES":       "2",
		"STEADY_STALL_TIMEOUT": "7.5",
		"STEADY_API_KEY":       "sk-not-shown",
	}
	lookup := func(name string) (string, bool) { v, ok := vars[name]; return v, ok }

	s, err := config.FromLookup("", lookup)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s)
	fmt.Println("attempts per request:", s.Retries+1)
	fmt.Println("set explicitly:", s.Explicit)
	// Output:
	// retries=2 stall_timeout=7.5s concurrent=32 api_key=REDACTED connect_timeout=10s read_timeout=1m0s max_time=0s max_retry_after=1m0s
	// attempts per request: 3
	// set explicitly: RETRIES|STALL_TIMEOUT|API_KEY
}

func ExampleConfigurationError() {
	lookup := func(name string) (string, bool) {
		if name == "STEADY_RETRIES" {
			return "ten", true
		}
		return "", false
	}
	_, err := config.FromLookup("", lookup)
	fmt.Println(err)

	var ce *config.ConfigurationError
	if errors.As(err, &ce) {
		fmt.Println("variable:", ce.Variable)
	}
	fmt.Println("is a configuration error:", errors.Is(err, config.ErrConfiguration))
	// Output:
	// STEADY_RETRIES="ten": want a whole number of re-sends, 0 or more (0 disables retry)
	// variable: STEADY_RETRIES
	// is a configuration error: true
}

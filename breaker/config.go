package breaker

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// The defaults of [Config], each documented on its field.
const (
	defaultFailureRatio   = 0.5
	defaultMinRequests    = 20
	defaultWindow         = time.Minute
	defaultOpenDelay      = 5 * time.Second
	defaultMaxOpenDelay   = time.Minute
	defaultProbes         = 1
	defaultK              = 2
	defaultThrottleWindow = 2 * time.Minute
	defaultMaxRejection   = 0.8
	defaultThrottleFloor  = 20
	defaultMaxSpacing     = 10 * time.Second
	defaultMaxHosts       = 1024
)

// buckets is how many time buckets a rolling window has.
const buckets = 10

// Config configures a [Breaker]. The zero value is the documented defaults.
type Config struct {
	// FailureRatio opens a closed circuit when at least this share of the
	// first attempts counted in Window failed (default 0.5), and at least
	// MinRequests (default 20) were counted.
	FailureRatio float64
	MinRequests  int
	// Window is the span of the failure count, in ten buckets (default 1 min).
	Window time.Duration
	// OpenDelay is how long a circuit stays open before it lets probes
	// through (default 5 s); each probe that fails doubles it, up to
	// MaxOpenDelay (default 1 min), which also bounds a Retry-After the
	// host sent.
	OpenDelay    time.Duration
	MaxOpenDelay time.Duration
	// Probes is how many attempts a half-open circuit lets through at
	// once (default 1).
	Probes int

	// K is the throttle's multiplier of accepted requests (default 2):
	// first attempts are rejected with probability
	// (requests − K·accepts)/(requests + 1) over ThrottleWindow (default
	// 2 min), at most MaxRejection (default 0.8, below 1), and never while
	// the window counts fewer than ThrottleFloor requests (default 20).
	K              float64
	ThrottleWindow time.Duration
	MaxRejection   float64
	ThrottleFloor  int

	// MaxConcurrency bounds the concurrency limit toward one host and key;
	// 0 leaves it unbounded until the first headerless 429, which sets it
	// to half the attempts then in flight. MaxSpacing (default 10 s)
	// bounds the time between two probes of a closed window whose length
	// is not yet learned.
	MaxConcurrency int
	MaxSpacing     time.Duration

	// MaxHosts bounds how many hosts and keys are tracked (default 1024);
	// beyond it the one used least recently is forgotten, idle closed
	// ones first.
	MaxHosts int

	// Rand returns a number in [0, 1) for the throttle's draw; nil means
	// math/rand/v2's Float64. It must be safe for concurrent use.
	Rand func() float64
	// OnChange, when set, is called after every state or limit change,
	// outside the breaker's lock. It must return quickly.
	OnChange func(Change)
}

// ConfigError names an invalid field of a [Config].
type ConfigError struct {
	Field   string
	Problem string
}

func (e *ConfigError) Error() string { return "breaker: invalid config: " + e.Field + " " + e.Problem }

// Validate reports every invalid field, each as a [*ConfigError].
func (c Config) Validate() error {
	var errs []error
	check := func(bad bool, field, format string, args ...any) {
		if bad {
			errs = append(errs, &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)})
		}
	}
	ratio := func(v float64) bool { return math.IsNaN(v) || v < 0 || v > 1 }
	check(ratio(c.FailureRatio), "FailureRatio", "is %v; want 0 (default) to 1", c.FailureRatio)
	check(c.MinRequests < 0, "MinRequests", "is negative (%d)", c.MinRequests)
	check(c.Window < 0, "Window", "is negative (%v)", c.Window)
	check(c.Window > 0 && c.Window < buckets, "Window", "is %v; want at least %dns", c.Window, buckets)
	check(c.OpenDelay < 0, "OpenDelay", "is negative (%v)", c.OpenDelay)
	check(c.MaxOpenDelay < 0, "MaxOpenDelay", "is negative (%v)", c.MaxOpenDelay)
	if c.OpenDelay >= 0 && c.MaxOpenDelay >= 0 {
		d := c.withDefaults()
		check(d.OpenDelay > d.MaxOpenDelay, "OpenDelay", "(%v) exceeds MaxOpenDelay (%v)", d.OpenDelay, d.MaxOpenDelay)
	}
	check(c.Probes < 0, "Probes", "is negative (%d)", c.Probes)
	check(math.IsNaN(c.K) || (c.K != 0 && c.K < 1) || math.IsInf(c.K, 0), "K", "is %v; want 0 (default) or a finite 1 or more", c.K)
	check(c.ThrottleWindow < 0, "ThrottleWindow", "is negative (%v)", c.ThrottleWindow)
	check(c.ThrottleWindow > 0 && c.ThrottleWindow < buckets, "ThrottleWindow", "is %v; want at least %dns", c.ThrottleWindow, buckets)
	check(math.IsNaN(c.MaxRejection) || c.MaxRejection < 0 || c.MaxRejection >= 1,
		"MaxRejection", "is %v; want 0 (default) or more, below 1 so a host is always re-probed", c.MaxRejection)
	check(c.ThrottleFloor < 0, "ThrottleFloor", "is negative (%d)", c.ThrottleFloor)
	check(c.MaxConcurrency < 0, "MaxConcurrency", "is negative (%d)", c.MaxConcurrency)
	check(c.MaxSpacing < 0, "MaxSpacing", "is negative (%v)", c.MaxSpacing)
	check(c.MaxHosts < 0, "MaxHosts", "is negative (%d)", c.MaxHosts)
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.FailureRatio, defaultFailureRatio)
	defInt(&c.MinRequests, defaultMinRequests)
	defDur(&c.Window, defaultWindow)
	defDur(&c.OpenDelay, defaultOpenDelay)
	defDur(&c.MaxOpenDelay, defaultMaxOpenDelay)
	defInt(&c.Probes, defaultProbes)
	def(&c.K, defaultK)
	defDur(&c.ThrottleWindow, defaultThrottleWindow)
	def(&c.MaxRejection, defaultMaxRejection)
	defInt(&c.ThrottleFloor, defaultThrottleFloor)
	defDur(&c.MaxSpacing, defaultMaxSpacing)
	defInt(&c.MaxHosts, defaultMaxHosts)
	return c
}

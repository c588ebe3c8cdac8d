package otelsteady

import (
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Metric names.
const (
	MetricAttempts     = "steady.attempts"
	MetricResends      = "steady.resends"
	MetricWaitDuration = "steady.wait.duration"
	MetricRefusals     = "steady.budget.refusals"
	MetricHolds        = "steady.pacing.holds"
	MetricStops        = "steady.stops"
	MetricPages        = "steady.walk.pages"
	MetricRows         = "steady.walk.rows"
	MetricSubrequests  = "steady.fanout.subrequests"
	MetricBreaker      = "steady.breaker.changes"
)

// waitBuckets span a jittered backoff of a few milliseconds to a quota
// reset of minutes, in seconds.
var waitBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

type instruments struct {
	attempts, resends, refusals, holds, stops, pages, rows, subrequests, breaker metric.Int64Counter
	waits                                                                        metric.Float64Histogram

	mu   sync.RWMutex
	sets map[setKey]measurement
}

// measurement holds one attribute set's option as the argument lists the
// instruments take. The instruments are interfaces, so a variadic list
// built at the call escapes, an allocation per measurement; these are
// built once and only read by the SDK.
type measurement struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func newMeasurement(kv []attribute.KeyValue) measurement {
	o := metric.WithAttributeSet(attribute.NewSet(kv...))
	return measurement{add: []metric.AddOption{o}, rec: []metric.RecordOption{o}}
}

func (m *instruments) init(meter metric.Meter) error {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	m.attempts = counter(MetricAttempts, "{attempt}", "Attempts sent, by whether each was a re-send.")
	m.resends = counter(MetricResends, "{attempt}", "Re-sends scheduled, by the failure that caused them and the wait's reason.")
	m.refusals = counter(MetricRefusals, "{attempt}", "Re-sends the shared retry budget refused.")
	m.holds = counter(MetricHolds, "{request}", "Requests held by rate-limit pacing before being sent.")
	m.stops = counter(MetricStops, "{request}", "Requests whose retrying ended without success, by reason.")
	m.pages = counter(MetricPages, "{page}", "Pages received by page walks.")
	m.rows = counter(MetricRows, "{row}", "Items received by page walks.")
	m.subrequests = counter(MetricSubrequests, "{request}", "Fan-out sub-requests completed.")
	m.breaker = counter(MetricBreaker, "{change}", "Changes of a host's overload control, by the state changed to.")
	var err error
	m.waits, err = meter.Float64Histogram(MetricWaitDuration, metric.WithUnit("s"),
		metric.WithDescription("Waits before an attempt, by reason."),
		metric.WithExplicitBucketBoundaries(waitBuckets...))
	errs = append(errs, err)
	m.sets = make(map[setKey]measurement)
	return errors.Join(errs...)
}

// setKey names one attribute set the events record with: of says which
// attributes, and v1 and v2 hold the values after server.address's, so
// that a key stays as small to hash as the attempt's set needs. The same
// values mean other attributes in another kind (a wait's reason and a
// stop's are both _OTHER when unknown), hence of.
type setKey struct {
	of     setOf
	resend bool
	host   string
	v1, v2 string
}

type setOf uint8

const (
	ofAttempt setOf = iota // v1 http.request.method, and steady.resend
	ofWait                 // v1 steady.wait.reason
	ofResend               // v1 error.type, v2 steady.wait.reason
	ofStop                 // v1 steady.stop.reason
	ofHost                 // server.address alone
	ofBreaker              // v1 steady.breaker.state
)

// maxSets bounds the cache; past it sets are built per measurement.
const maxSets = 1024

// set returns the measurement for k, built once: building an attribute
// set sorts and copies, which would cost allocations on every request.
func (m *instruments) set(k setKey, build func() []attribute.KeyValue) measurement {
	m.mu.RLock()
	o, ok := m.sets[k]
	m.mu.RUnlock()
	if ok {
		return o
	}
	o = newMeasurement(build())
	m.mu.Lock()
	if len(m.sets) < maxSets {
		m.sets[k] = o
	}
	m.mu.Unlock()
	return o
}

func (m *instruments) attemptSet(host string, method attribute.KeyValue, resend bool) measurement {
	return m.set(setKey{of: ofAttempt, host: host, v1: method.Value.AsString(), resend: resend}, func() []attribute.KeyValue {
		return []attribute.KeyValue{semconv.ServerAddress(host), method, attribute.Bool(KeyResend, resend)}
	})
}

func (m *instruments) waitSet(host, reason string) measurement {
	return m.set(setKey{of: ofWait, host: host, v1: reason}, func() []attribute.KeyValue {
		return []attribute.KeyValue{semconv.ServerAddress(host), attribute.String(KeyWaitReason, reason)}
	})
}

func (m *instruments) resendSet(host string, errType attribute.KeyValue, reason string) measurement {
	return m.set(setKey{of: ofResend, host: host, v1: errType.Value.AsString(), v2: reason}, func() []attribute.KeyValue {
		return []attribute.KeyValue{semconv.ServerAddress(host), errType, attribute.String(KeyWaitReason, reason)}
	})
}

func (m *instruments) stopSet(host, reason string) measurement {
	return m.set(setKey{of: ofStop, host: host, v1: reason}, func() []attribute.KeyValue {
		return []attribute.KeyValue{semconv.ServerAddress(host), attribute.String(KeyStopReason, reason)}
	})
}

func (m *instruments) hostSet(host string) measurement {
	return m.set(setKey{of: ofHost, host: host}, func() []attribute.KeyValue {
		return []attribute.KeyValue{semconv.ServerAddress(host)}
	})
}

func (m *instruments) breakerSet(host, state string) measurement {
	return m.set(setKey{of: ofBreaker, host: host, v1: state}, func() []attribute.KeyValue {
		return []attribute.KeyValue{semconv.ServerAddress(host), attribute.String(KeyBreakerState, state)}
	})
}

// Package otelsteady turns steady's events into OpenTelemetry spans and metrics.
package otelsteady

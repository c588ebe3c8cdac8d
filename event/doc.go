// Package event defines the events that steady's layers report, and the
// interfaces that receive them.
//
// Nothing in steady prints on its own. The retrying transport, the page walk
// and the fan-out send [Event] values to a [Reporter]; a nil Reporter means
// silence. [Multi] passes every event to several reporters, and [Slog]
// adapts events to a [log/slog.Logger] for services that log instead of
// drawing. The command line's renderers (bars, plain lines) live with the
// command, not here, so a library user links nothing of them.
//
// URLs and error texts in events are already redacted by the layer that made
// them: an event never carries an API key.
//
// Each event carries the context of the work it is about, and a stop its
// sentinel error. A [Tracer] is a Reporter that is also told when each
// attempt starts and picks the context it is sent with: the seam a tracing
// adapter (the otelsteady module) uses to give every attempt its own span.
package event

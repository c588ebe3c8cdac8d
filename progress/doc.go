// Package progress defines the events that steady's layers report and the
// renderers that show them.
//
// Nothing in steady prints on its own. The retrying transport, the page walk
// and the fan-out send [Event] values to a [Reporter]; a nil Reporter means
// silence. The command line picks a renderer: live bars on a terminal, plain
// throttled lines elsewhere, or nothing. [Slog] adapts events to a
// [log/slog.Logger] for services that log instead.
//
// URLs and error texts in events are already redacted by the layer that made
// them: an event never carries an API key.
package progress

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
//
// Each event carries the context of the work it is about, and a stop its
// sentinel error. A [Tracer] is a Reporter that is also told when each
// attempt starts and picks the context it is sent with: the seam a tracing
// adapter (the otelsteady module) uses to give every attempt its own span.
//
// # Renderers
//
// [Auto] chooses: [Discard] when asked to be quiet, [Terminal] when the
// output is a terminal, [Plain] otherwise. [Terminal] draws bars (sub-requests
// k of n with a percentage and ETA when the total is known, rows and bytes
// with their rates, retries, and the current wait with its reason, such as
// "rate limited: waiting 12s as the server asked"). [Plain] writes one short
// line per notable event, each starting with a word to grep for, and
// throttles them by the events' own times so a storm of retries stays
// readable and tests under testing/synctest are exact. Both tell the user,
// once, that an API key would help, when a host that accepts one answers 429
// and none is set ([Options].KeyHosts).
//
// A download is shown differently: [NewDownload] chooses the same way
// between [DownloadBar] and [DownloadLines], which show one body's bytes
// (size, share, rate, time left) and count its resumes, the RetryScheduled
// events whose reason is "resume at byte k" ([WaitResume]).
//
// A [Renderer] must be closed: Close prints what is left and, for the bars,
// returns only when the drawing goroutines have ended.
//
// # Counting
//
// A [Tally] counts requests, retries and waits by reason, pages, rows, bytes
// and stops, and writes a summary table; chain it with a renderer through
// [Multi]. Rows and bytes are the sums of [PageReceived] events.
//
// Text taken from the network (URLs, error texts, reasons) is stripped of
// control characters, line separators and bidirectional overrides before it
// is shown, so it cannot forge a line or move the cursor.
package render

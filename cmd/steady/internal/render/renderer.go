package render

import (
	"io"
	"os"
	"time"

	"github.com/steadyhttp/steady/event"

	"golang.org/x/term"
)

// A Renderer is a [Reporter] that owns an output. Close finishes the output
// (the last progress line, the final frame of the bars) and returns once
// nothing of the renderer runs any more; events reported after Close are
// dropped. Close returns the first error writing the output met.
type Renderer interface {
	event.Reporter
	Close() error
}

// Options configure the renderers. The zero value is useful: every zero
// field means the documented default.
type Options struct {
	// Quiet makes [Auto] return [Discard].
	Quiet bool

	// Verbose adds a line for every attempt, unthrottled, the way curl -v
	// shows each exchange: its method and redacted URL, its status or
	// failure class, and the wait that follows with its reason (see
	// [AttemptLine]). It replaces the throttled retry, waiting and stopped
	// lines of the plain renderer, which would repeat it.
	Verbose bool

	// Interval is the shortest time between two progress lines of the plain
	// renderer (default 5s; negative: a line for every page and
	// sub-request). It is ignored when Every is positive.
	Interval time.Duration
	// Every, when positive, makes the plain renderer print a progress line
	// every Every pages or sub-requests instead of by time.
	Every int
	// NoticeInterval is the shortest time between two lines of one kind
	// (retry, waiting, stopped) for one host (default 1s; negative: no
	// limit). Lines held back are counted on the next one, and the retries
	// and stops in all are on every progress line.
	NoticeInterval time.Duration
	// QuotaLow is the remaining quota at or below which a quota an event tells is
	// shown (default 10; negative: never).
	QuotaLow int64

	// KeyHosts are the hosts that accept an API key; KeySet says a key is
	// configured. When a host in KeyHosts answers 429 and no key is set,
	// the renderer shows once how to set one, naming the variable KeyEnv
	// (default "STEADY_API_KEY").
	KeyHosts []string
	KeySet   bool
	KeyEnv   string

	// Width is the terminal renderer's line width when its output is not a
	// terminal (default 80); on a terminal the terminal's width is used.
	Width int
}

const (
	defaultInterval       = 5 * time.Second
	defaultNoticeInterval = time.Second
	defaultQuotaLow       = 10
	defaultKeyEnv         = "STEADY_API_KEY"
)

// withDefaults returns o with its zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.Interval == 0 {
		o.Interval = defaultInterval
	}
	if o.NoticeInterval == 0 {
		o.NoticeInterval = defaultNoticeInterval
	}
	if o.QuotaLow == 0 {
		o.QuotaLow = defaultQuotaLow
	}
	if o.KeyEnv == "" {
		o.KeyEnv = defaultKeyEnv
	}
	return o
}

// Auto chooses a renderer for w: [Discard] when opt.Quiet (only the
// attempt lines when opt.Verbose is set too, as curl -sv), live bars
// ([NewTerminal]) when w is an *os.File open on a terminal, plain lines
// ([NewPlain]) otherwise, which is what a pipe, a file or a CI log needs.
func Auto(w io.Writer, opt Options) Renderer {
	if w == nil || opt.Quiet && !opt.Verbose {
		return Discard
	}
	if opt.Quiet {
		return &attemptLog{w: w}
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return NewTerminal(w, opt)
	}
	return NewPlain(w, opt)
}

// Discard is the silent renderer: it drops every event. A nil [Reporter]
// is silent too; Discard exists where a [Renderer] is expected.
var Discard Renderer = discard{}

type discard struct{}

func (discard) Report(event.Event) {}
func (discard) Close() error       { return nil }

// now is the time an event is accounted at: its own stamp, else the clock.
// Taking the stamp first keeps throttling exact under testing/synctest and
// for events replayed from a record.
func now(e event.Event) time.Time {
	if e.Time.IsZero() {
		return time.Now()
	}
	return e.Time
}

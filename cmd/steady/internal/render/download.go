package render

import (
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/event"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// A Download renders the progress of one body being saved: its size, how
// much arrived, the rate, the time left and how many times it was resumed.
// The saver calls [Download.Begin] once the size is known (-1: unknown) and
// from which byte it continues, then [Download.Add] as bytes are written;
// the request's events ([Download.Report]) supply retries, waits and
// resumes. A Download is safe for concurrent use.
type Download interface {
	Renderer
	Begin(offset, total int64)
	Add(n int)
}

// NewDownload chooses a download renderer for w as [Auto] does: silent when
// opt.Quiet, a live bar on a terminal, plain lines otherwise.
func NewDownload(w io.Writer, opt Options) Download {
	if w == nil || opt.Quiet && !opt.Verbose {
		return discardDownload{}
	}
	if opt.Quiet {
		return attemptsOnly{&attemptLog{w: w}} // -q -v: the attempt lines alone
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return NewDownloadBar(w, opt)
	}
	return NewDownloadLines(w, opt)
}

type discardDownload struct{ discard }

func (discardDownload) Begin(int64, int64) {}
func (discardDownload) Add(int)            {}

type attemptsOnly struct{ *attemptLog }

func (attemptsOnly) Begin(int64, int64) {}
func (attemptsOnly) Add(int)            {}

// byteMeter is what both download renderers count.
type byteMeter struct {
	start   time.Time
	offset  int64 // bytes already on disk when the run began
	total   int64 // -1: unknown
	done    int64 // bytes written, offset included
	resumes int
	retries int
	began   bool
}

// count files an event: resumes and retries.
func (m *byteMeter) count(e event.Event) {
	if e.Kind == event.RetryScheduled {
		if strings.HasPrefix(e.Reason, event.WaitResume+" at byte ") {
			m.resumes++
		} else {
			m.retries++
		}
	}
}

// line is the one-line account: "12 MB/64 MB 19% (45 MB/s) eta 1s · 2 resumes".
func (m *byteMeter) line(now time.Time, final bool) string {
	var b strings.Builder
	b.WriteString(fmtBytes(m.done))
	if m.total >= 0 {
		b.WriteString("/" + fmtBytes(m.total))
		if m.total > 0 {
			b.WriteString(" " + strconv.FormatInt(min(100, m.done*100/m.total), 10) + "%")
		}
	}
	el := now.Sub(m.start)
	if got := m.done - m.offset; el > 0 && got > 0 {
		rate := float64(got) / el.Seconds()
		b.WriteString(" (" + fmtBytes(int64(rate)) + "/s)")
		if !final && m.total > m.done && rate > 0 {
			b.WriteString(" eta " + fmtDuration(time.Duration(float64(m.total-m.done)/rate*float64(time.Second))))
		}
	}
	if m.offset > 0 {
		b.WriteString(" · continued from " + fmtBytes(m.offset))
	}
	b.WriteString(" · " + plural(m.resumes, "resume", "resumes"))
	if m.retries > 0 {
		b.WriteString(" · " + plural(m.retries, "retry", "retries"))
	}
	return b.String()
}

// DownloadLines prints a progress line at most every Interval (default 5s;
// negative: only the last line, on Close) and the event lines of [Plain]
// (retries, waits, stops):
//
//	download: 12 MB/64 MB 19% (45 MB/s) eta 1s · 0 resumes
type DownloadLines struct {
	mu     sync.Mutex
	events *Plain
	w      io.Writer
	every  time.Duration
	m      byteMeter
	shown  time.Time
	closed bool
	err    error
}

// NewDownloadLines returns the plain download renderer.
func NewDownloadLines(w io.Writer, opt Options) *DownloadLines {
	opt = opt.withDefaults()
	every := opt.Interval
	return &DownloadLines{events: NewPlain(w, opt), w: w, every: every}
}

// Report renders e's line, if any, and counts it.
func (d *DownloadLines) Report(e event.Event) {
	d.mu.Lock()
	if !d.closed {
		d.m.count(e)
	}
	d.mu.Unlock()
	d.events.Report(e)
}

// Begin starts the account at offset of total bytes.
func (d *DownloadLines) Begin(offset, total int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	d.m.start, d.m.offset, d.m.total, d.m.done, d.m.began = now, offset, total, offset, true
	d.shown = now
}

// Add counts n bytes written.
func (d *DownloadLines) Add(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.m.done += int64(n)
	if now := time.Now(); d.every >= 0 && now.Sub(d.shown) >= d.every {
		d.shown = now
		d.write(d.m.line(now, false))
	}
}

func (d *DownloadLines) write(line string) {
	if _, err := io.WriteString(d.w, "download: "+line+"\n"); err != nil && d.err == nil {
		d.err = err
	}
}

// Close prints the last line and closes the event renderer.
func (d *DownloadLines) Close() error {
	d.mu.Lock()
	if !d.closed {
		d.closed = true
		if d.m.began {
			d.write(d.m.line(time.Now(), true))
		}
	}
	err := d.err
	d.mu.Unlock()
	if e := d.events.Close(); err == nil {
		err = e
	}
	return err
}

// DownloadBar draws a live bar, in the same decimal units as every other
// line of the command:
//
//	12 MB/64 MB [=====>------------]  19% (45 MB/s) eta 1s · 0 resumes
//
// with stops printed above it. A wait on the status counts down.
type DownloadBar struct {
	mu      sync.Mutex
	w       io.Writer
	verbose bool
	p       *mpb.Progress
	bar     *mpb.Bar
	m       byteMeter
	view    atomic.Pointer[barView]
	closed  bool
	once    sync.Once
	err     error
}

// barView is what the decorators draw, read on the bar library's
// goroutines without the renderer's lock.
type barView struct {
	counts string       // resumes and retries
	wait   *event.Event // the current wait, nil when none
	since  time.Time    // the clock when the wait was reported
	stop   string       // the stop, "" when none
}

func (v *barView) text(now time.Time) string {
	s := v.counts
	if v.wait != nil {
		s += " · " + waitPhrase(*v.wait, countdown(v.wait.Wait, now.Sub(v.since)))
	}
	if v.stop != "" {
		s += " · " + v.stop
	}
	return s
}

// NewDownloadBar returns the terminal download renderer.
func NewDownloadBar(w io.Writer, opt Options) *DownloadBar {
	opt = opt.withDefaults()
	d := &DownloadBar{w: w, verbose: opt.Verbose}
	d.view.Store(&barView{counts: "0 resumes"})
	d.p = mpb.New(frames(w), mpb.WithWidth(opt.Width), mpb.WithAutoRefresh())
	return d
}

// Begin creates the bar at offset of total bytes (total -1: a counter).
func (d *DownloadBar) Begin(offset, total int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.bar != nil {
		return
	}
	now := time.Now()
	d.m.start, d.m.offset, d.m.total, d.m.done, d.m.began = now, offset, total, offset, true
	// The decorators read start, offset and total, set once here before
	// the bar exists, and the bar's own count.
	start := now
	d.bar = d.p.New(max(total, 0), mpb.BarStyle(),
		mpb.PrependDecorators(decor.Any(func(s decor.Statistics) string {
			if total < 0 {
				return fmtBytes(s.Current)
			}
			return fmtBytes(s.Current) + "/" + fmtBytes(total)
		})),
		mpb.AppendDecorators(
			decor.Percentage(decor.WCSyncSpace),
			decor.Any(func(s decor.Statistics) string { return barRate(s, start, offset, total) }),
			decor.Any(func(decor.Statistics) string { return " · " + d.view.Load().text(time.Now()) }),
		))
	d.bar.SetCurrent(offset)
}

// barRate is the bar's rate and time left, from the bytes of this run.
func barRate(s decor.Statistics, start time.Time, offset, total int64) string {
	el, got := time.Since(start), s.Current-offset
	if el <= 0 || got <= 0 {
		return ""
	}
	rate := float64(got) / el.Seconds()
	out := " (" + fmtBytes(int64(rate)) + "/s)"
	if !s.Completed && total > s.Current {
		out += " eta " + fmtDuration(time.Duration(float64(total-s.Current)/rate*float64(time.Second)))
	}
	return out
}

// Add moves the bar by n bytes.
func (d *DownloadBar) Add(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.bar == nil {
		return
	}
	d.m.done += int64(n)
	d.bar.IncrBy(n)
	// Bytes arriving after the wait ended mean it is over.
	if v := d.view.Load(); v.wait != nil && time.Since(v.since) >= v.wait.Wait {
		over := *v
		over.wait = nil
		d.view.Store(&over)
	}
}

// Report counts e and shows waits and stops.
func (d *DownloadBar) Report(e event.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.m.count(e)
	v := *d.view.Load()
	switch e.Kind {
	case event.RetryScheduled, event.Waiting:
		w := e
		v.wait, v.since, v.stop = &w, time.Now(), ""
	case event.RequestFinished:
		v.wait, v.stop = nil, ""
	case event.Stopped:
		v.wait, v.stop = nil, stopPhrase(e)
		if !d.verbose && !interrupted(e) {
			_, _ = d.p.Write([]byte(stoppedLine(e) + "\n"))
		}
	}
	if line, ok := verboseLine(Options{Verbose: d.verbose}, e); ok {
		_, _ = d.p.Write([]byte(line + "\n"))
	}
	v.counts = plural(d.m.resumes, "resume", "resumes")
	if d.m.retries > 0 {
		v.counts += " · " + plural(d.m.retries, "retry", "retries")
	}
	d.view.Store(&v)
}

// Close draws the final frame and waits for the bar library to end.
func (d *DownloadBar) Close() error {
	d.once.Do(func() {
		d.mu.Lock()
		d.closed = true
		bar := d.bar
		d.mu.Unlock()
		if bar != nil {
			if d.m.total < 0 {
				bar.SetTotal(-1, true)
			} else if !bar.Completed() {
				bar.Abort(false) // an unfinished download keeps its bar where it stopped
			}
		}
		d.p.Wait()
		d.err = d.p.Error
	})
	return d.err
}

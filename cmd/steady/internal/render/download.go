package render

import (
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
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

// DownloadBar draws a live bar:
//
//	12.0 MiB / 64.0 MiB [=====>------------]  19% 45.1 MiB/s eta 1s · 0 resumes
//
// with stops printed above it.
type DownloadBar struct {
	mu      sync.Mutex
	verbose bool
	p       *mpb.Progress
	bar     *mpb.Bar
	m       byteMeter
	status  string
	last    time.Time
	view    safeString
	closed  bool
	once    sync.Once
	err     error
}

// safeString is text a decorator reads on the bar library's goroutine.
type safeString struct {
	mu sync.Mutex
	s  string
}

func (s *safeString) set(v string) { s.mu.Lock(); s.s = v; s.mu.Unlock() }
func (s *safeString) get() string  { s.mu.Lock(); defer s.mu.Unlock(); return s.s }

// NewDownloadBar returns the terminal download renderer.
func NewDownloadBar(w io.Writer, opt Options) *DownloadBar {
	opt = opt.withDefaults()
	d := &DownloadBar{verbose: opt.Verbose}
	d.view.set("0 resumes")
	d.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(opt.Width), mpb.WithAutoRefresh())
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
	d.m.start, d.m.offset, d.m.total, d.m.done, d.m.began, d.last = now, offset, total, offset, true, now
	size := max(total, 0)
	d.bar = d.p.New(size, mpb.BarStyle(),
		mpb.PrependDecorators(decor.Counters(decor.SizeB1024(0), "% .1f / % .1f")),
		mpb.AppendDecorators(
			decor.Percentage(decor.WCSyncSpace),
			decor.EwmaSpeed(decor.SizeB1024(0), " % .1f", 30),
			decor.OnComplete(decor.EwmaETA(decor.ET_STYLE_GO, 30, decor.WCSyncSpace), ""),
			decor.Any(func(decor.Statistics) string { return " · " + d.view.get() }),
		))
	d.bar.SetCurrent(offset)
}

// Add moves the bar by n bytes.
func (d *DownloadBar) Add(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.bar == nil {
		return
	}
	now := time.Now()
	d.m.done += int64(n)
	d.bar.EwmaIncrBy(n, now.Sub(d.last))
	d.last = now
}

// Report counts e and shows waits and stops.
func (d *DownloadBar) Report(e event.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.m.count(e)
	switch e.Kind {
	case event.RetryScheduled, event.Waiting:
		d.status = waitPhrase(e)
	case event.RequestFinished:
		d.status = ""
	case event.Stopped:
		d.status = stopPhrase(e)
		if !d.verbose {
			_, _ = d.p.Write([]byte(stoppedLine(e) + "\n"))
		}
	}
	if line, ok := verboseLine(Options{Verbose: d.verbose}, e); ok {
		_, _ = d.p.Write([]byte(line + "\n"))
	}
	v := plural(d.m.resumes, "resume", "resumes")
	if d.m.retries > 0 {
		v += " · " + plural(d.m.retries, "retry", "retries")
	}
	if d.status != "" {
		v += " · " + d.status
	}
	d.view.set(v)
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

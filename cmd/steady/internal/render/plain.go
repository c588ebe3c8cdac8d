package render

import (
	"io"
	"sync"
	"time"

	"github.com/steadyhttp/steady/event"
)

// Plain renders events as short lines, one per notable event, for outputs
// that are not terminals: pipes, files, CI logs. Each line starts with a
// word to grep for: retry, waiting, stopped, quota, hint, progress, breaker.
//
//	retry 1/4 GET https://api.example.gov/items?page=3: 503, waiting 1.2s (backoff)
//	breaker open: api.example.gov; probing in 5s
//	hint: api.example.gov accepts an API key; set STEADY_API_KEY to raise your rate limit
//	progress: 12/40 sub-requests, 3400 rows, 1.2 MB, 2 retries, eta 1m20s
//
// Lines are throttled by the events' own times (see [Options]): at most one
// progress line per Interval, at most one retry, waiting, stopped or breaker
// limit line per host and NoticeInterval; a breaker's state changes always
// print. A Plain is safe for concurrent use; each line is
// written with one Write call.
type Plain struct {
	mu       sync.Mutex
	w        io.Writer
	opt      Options
	m        meter
	shown    meter     // the meter as the last progress line showed it
	lastLine time.Time // when the last progress line was printed
	printed  bool      // a progress line was printed
	steps    int       // pages and sub-requests seen, for Options.Every
	notices  notices
	quota    map[string]time.Time // last quota line per host
	hint     keyHint
	closed   bool
	err      error
}

var _ Renderer = (*Plain)(nil)

// NewPlain returns a plain line renderer writing to w.
func NewPlain(w io.Writer, opt Options) *Plain {
	opt = opt.withDefaults()
	return &Plain{
		w:       w,
		opt:     opt,
		notices: newNotices(opt.NoticeInterval),
		quota:   make(map[string]time.Time),
		hint:    newKeyHint(opt),
	}
}

// Report renders e; it drops e after Close.
func (p *Plain) Report(e event.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	t := now(e)
	p.m.add(e, t)
	if line, ok := verboseLine(p.opt, e); ok {
		p.println(line)
	}
	switch {
	case p.opt.Verbose && (e.Kind == event.RetryScheduled || e.Kind == event.Waiting || e.Kind == event.Stopped || e.Kind == event.BreakerChanged):
		// Said in full by the attempt line.
	default:
		p.report(e, t)
	}
	if line, ok := p.hint.check(e); ok {
		p.println(line)
	}
}

func (p *Plain) report(e event.Event, t time.Time) {
	switch e.Kind {
	case event.RetryScheduled:
		p.notice(e, t, retryLine)
	case event.Waiting:
		p.notice(e, t, waitingLine)
	case event.Stopped:
		if !interrupted(e) { // the command says it once, as it ends
			p.notice(e, t, stoppedLine)
		}
	case event.QuotaSeen:
		p.quotaSeen(e, t)
	case event.RequestFinished:
		if e.Quota {
			p.quotaSeen(e, t)
		}
	case event.PageReceived, event.SubrequestDone:
		p.step(e, t)
	case event.Resumed:
		p.println(resumedLine(e))
	case event.Parked:
		if line, ok := parkedLine(e); ok {
			p.println(line)
		}
	case event.BreakerChanged:
		if ok, held := breakerNotice(&p.notices, e); ok {
			p.println(withSuppressed(breakerLine(e), held))
		}
	}
}

// Close prints a last progress line when something happened since the last
// one, and returns the first write error. It never blocks on anything but
// the writer.
func (p *Plain) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		if p.m.changed(p.shown) {
			p.println(p.m.line())
			p.shown = p.m
		}
	}
	return p.err
}

func (p *Plain) notice(e event.Event, t time.Time, render func(event.Event) string) {
	ok, held := p.notices.admit(noticeKey{e.Kind, hostOf(e)}, t)
	if ok {
		p.println(withSuppressed(render(e), held))
	}
}

func (p *Plain) quotaSeen(e event.Event, t time.Time) {
	if e.Remaining < 0 || p.opt.QuotaLow < 0 || e.Remaining > p.opt.QuotaLow {
		return
	}
	host := hostOf(e)
	if last, seen := p.quota[host]; seen && p.opt.Interval > 0 && t.Sub(last) < p.opt.Interval {
		return
	}
	p.quota[host] = t
	p.println(quotaLine(e))
}

// step decides whether a page or a finished sub-request is worth a progress
// line: by count when Options.Every is set, else by time; the last
// sub-request of a known total always is.
func (p *Plain) step(e event.Event, t time.Time) {
	p.steps++
	var due bool
	switch {
	case e.Kind == event.SubrequestDone && p.m.subTotal > 0 && p.m.subDone >= p.m.subTotal:
		due = true
	case p.opt.Every > 0:
		due = p.steps%p.opt.Every == 0
	default:
		due = !p.printed || p.opt.Interval < 0 || t.Sub(p.lastLine) >= p.opt.Interval
	}
	if !due {
		return
	}
	p.println(p.m.line())
	p.shown, p.lastLine, p.printed = p.m, t, true
}

// println writes one line; after a write error it writes nothing more, since
// a closed pipe stays closed.
func (p *Plain) println(line string) {
	if p.err != nil {
		return
	}
	_, p.err = io.WriteString(p.w, line+"\n")
}

package render

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/event"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Terminal renders live bars on a terminal:
//
//	sub-requests 12/40 [=======>-----------------]  30% eta 1m20s
//	rows 3400 (120/s) · 1.2 MB (45 kB/s) · 17 pages
//	retries 2 · rate limited: waiting 12s as the server asked
//
// The sub-request bar appears with the first SubrequestDone that carries a
// total; without a total, rows and bytes are counters with a rate and no
// percentage. Stops, breaker changes and the API-key hint are printed above the bars, where
// they stay after the bars are redrawn.
//
// A Terminal is safe for concurrent use. [Terminal.Close] draws the final
// frame and returns once every goroutine of the bar library has ended.
type Terminal struct {
	mu      sync.Mutex
	w       io.Writer
	p       *mpb.Progress
	opt     Options
	m       meter
	hint    keyHint
	notices notices
	sub     *mpb.Bar // nil until a total of sub-requests is known
	rows    *mpb.Bar
	state   *mpb.Bar
	closed  bool

	status      string      // the current stop, "" when none
	wait        event.Event // the current wait, when waiting
	waiting     bool
	waitSince   time.Time // the clock when the wait was reported
	statusUntil time.Time // when the wait ends, in the events' time
	quota       string    // the last low quota, "" when none

	// view is what the bars draw. The bar library calls decorators on its
	// own goroutines while Report may be waiting on those goroutines, so
	// decorators read this snapshot and never take mu.
	view atomic.Pointer[termView]

	closeOnce sync.Once
	err       error
}

type termView struct {
	subLeft, subRight, rows string
	// The status line: its head (the retries), the wait it counts down
	// to until, when waiting, and its tail (a stop, a low quota).
	stateHead, stateTail string
	wait                 *event.Event
	since                time.Time // the clock when the wait was reported
}

// state is the status line as drawn at now: a wait shows what is left of
// it, so the line counts down between events.
func (v *termView) state(now time.Time) string {
	s := v.stateHead
	if v.wait != nil {
		s += " · " + waitPhrase(*v.wait, countdown(v.wait.Wait, now.Sub(v.since)))
	}
	return s + v.stateTail
}

var _ Renderer = (*Terminal)(nil)

// NewTerminal returns a renderer drawing bars on w. Use it when w is a
// terminal ([Auto] checks); on anything else the frames pile up one after
// the other.
func NewTerminal(w io.Writer, opt Options) *Terminal {
	opt = opt.withDefaults()
	t := &Terminal{
		w:       w,
		opt:     opt,
		hint:    newKeyHint(opt),
		notices: newNotices(opt.NoticeInterval),
	}
	t.view.Store(&termView{rows: "rows 0", stateHead: "retries 0"})
	// Auto refresh is forced: the caller chose bars, and without it the
	// library draws nothing when w is not an *os.File terminal.
	t.p = mpb.New(frames(w), mpb.WithWidth(opt.Width), mpb.WithAutoRefresh())
	text := func(field func(*termView) string) decor.Decorator {
		return decor.Any(func(decor.Statistics) string { return field(t.view.Load()) })
	}
	t.rows = t.p.New(0, mpb.NopStyle(), mpb.BarFillerTrim(), mpb.BarPriority(1),
		mpb.PrependDecorators(text(func(v *termView) string { return v.rows })))
	t.state = t.p.New(0, mpb.NopStyle(), mpb.BarFillerTrim(), mpb.BarPriority(2),
		mpb.PrependDecorators(text(func(v *termView) string { return v.state(time.Now()) })))
	return t
}

// Report updates the bars with e; it drops e after Close.
func (t *Terminal) Report(e event.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	at := now(e)
	t.m.add(e, at)
	var above []string
	if line, ok := verboseLine(t.opt, e); ok {
		above = append(above, line)
	}
	if e.HasQuota() {
		t.quota = ""
		if e.Remaining >= 0 && t.opt.QuotaLow >= 0 && e.Remaining <= t.opt.QuotaLow {
			t.quota = "quota " + quotaPhrase(e)
		}
	}
	switch e.Kind {
	case event.RetryScheduled, event.Waiting:
		t.status, t.wait, t.waiting, t.statusUntil, t.waitSince = "", e, true, at.Add(e.Wait), time.Now()
	case event.Stopped:
		t.status, t.waiting, t.statusUntil = stopPhrase(e), false, at
		if interrupted(e) {
			break // the command says it once, as it ends
		}
		if ok, held := t.notices.admit(noticeKey{e.Kind, hostOf(e)}, at); ok && !t.opt.Verbose {
			above = append(above, withSuppressed(stoppedLine(e), held))
		}
	case event.Resumed:
		above = append(above, resumedLine(e))
	case event.Parked:
		if line, ok := parkedLine(e); ok {
			above = append(above, line)
		}
	case event.BreakerChanged:
		if ok, held := breakerNotice(&t.notices, e); ok && !t.opt.Verbose {
			above = append(above, withSuppressed(breakerLine(e), held))
		}
	case event.RequestFinished, event.PageReceived, event.SubrequestDone:
		// Data arriving after the wait ended means the wait is over; a
		// response handed back with an error status is no such sign.
		if (t.status != "" || t.waiting) && !at.Before(t.statusUntil) && (e.Kind != event.RequestFinished || e.Status < 400) {
			t.status, t.waiting = "", false
		}
	}
	if e.Kind == event.SubrequestDone && t.m.subTotal > 0 {
		t.updateSub()
	}
	if line, ok := t.hint.check(e); ok {
		above = append(above, line)
	}
	t.view.Store(t.render())
	for _, line := range above {
		// Lines written to the container are printed above the bars on the
		// next frame. An error means the container has shut down after a
		// render error, which Close reports.
		_, _ = t.p.Write([]byte(line + "\n"))
	}
}

// updateSub creates the sub-request bar on first need and moves it.
func (t *Terminal) updateSub() {
	total, done := int64(t.m.subTotal), int64(min(t.m.subDone, t.m.subTotal))
	if t.sub == nil {
		bar, err := t.p.Add(total, mpb.BarStyle().Build(), mpb.BarPriority(0),
			mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return t.view.Load().subLeft })),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return t.view.Load().subRight })))
		if err != nil {
			return // the container shut down after a render error
		}
		t.sub = bar
	}
	t.sub.SetTotal(total, false)
	t.sub.SetCurrent(done)
}

// render builds the text the bars draw from the current counts.
func (t *Terminal) render() *termView {
	m := &t.m
	v := &termView{}
	if m.subTotal > 0 {
		v.subLeft = "sub-requests " + strconv.Itoa(m.subDone) + "/" + strconv.Itoa(m.subTotal)
		v.subRight = strconv.Itoa(min(100, m.subDone*100/m.subTotal)) + "%"
		if left, ok := m.eta(); ok && m.subDone < m.subTotal {
			v.subRight += " eta " + fmtDuration(left)
		}
	}

	rows := "rows " + strconv.FormatInt(m.rows, 10)
	if m.rowsTotal > 0 {
		rows += "/" + strconv.FormatInt(m.rowsTotal, 10) +
			" " + strconv.FormatInt(min(100, m.rows*100/m.rowsTotal), 10) + "%"
	}
	if r, ok := m.rowRate(); ok {
		rows += " (" + fmtAmount(r) + "/s)"
	}
	if m.subTotal == 0 && m.rowsTotal > 0 && m.rows < m.rowsTotal {
		if left, ok := m.eta(); ok {
			rows += " eta " + fmtDuration(left)
		}
	}
	rows += " · " + fmtBytes(m.bytes)
	if r, ok := m.byteRate(); ok {
		rows += " (" + fmtBytes(int64(r)) + "/s)"
	}
	v.rows = rows + " · " + plural(m.pages, "page", "pages")

	v.stateHead = "retries " + strconv.Itoa(m.retries)
	if t.waiting {
		w := t.wait
		v.wait, v.since = &w, t.waitSince
	}
	if t.status != "" {
		v.stateTail += " · " + t.status
	}
	if t.quota != "" {
		v.stateTail += " · " + t.quota
	}
	return v
}

// stopPhrase is the status line's account of a Stopped event: "stalled", or
// "stopped: attempts exhausted (503)". The line printed above the bars has
// the stall's full reason.
func stopPhrase(e event.Event) string {
	if interrupted(e) {
		return "interrupted"
	}
	reason := stopReason(e)
	if strings.HasPrefix(reason, "stalled") {
		return "stalled"
	}
	s := "stopped: " + reason
	if f := stopDetail(e); f != "" {
		s += " (" + f + ")"
	}
	return s
}

// Close draws the final frame and returns once the bar library's goroutines
// have ended. It returns the library's render error, if any. Calling it
// again returns the same result.
func (t *Terminal) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		sub := t.sub
		t.mu.Unlock()
		if sub != nil {
			// An unfinished run keeps its bar where it stopped.
			sub.Abort(false)
		}
		// Completing the counter bars lets the container draw their last
		// state and end; Wait returns when every bar has.
		t.rows.SetTotal(-1, true)
		t.state.SetTotal(-1, true)
		t.p.Wait()
		t.err = t.p.Error
	})
	return t.err
}

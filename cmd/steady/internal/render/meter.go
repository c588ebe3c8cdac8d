package render

import (
	"strconv"
	"strings"
	"time"

	"github.com/steadyhttp/steady/event"
)

// A meter accumulates what the renderers show: pages, rows, bytes, retries,
// sub-requests, and the span of event times that rates and ETAs divide by.
// It is not safe for concurrent use; each renderer guards its own.
//
// Rows and bytes are the sums of PageReceived events; other kinds' Items do
// not add to them, so a walk inside a fan-out is not counted twice.
type meter struct {
	start, last time.Time
	pages       int
	rows        int64
	// baseRows and baseBytes were received by an earlier run ([Resumed]):
	// counted as done, not as work of this run's span.
	baseRows, baseBytes int64
	rowsTotal           int64
	bytes               int64
	retries             int
	stops               int
	subDone             int
	subTotal            int
	// etaLeft is the walk's own ETA as of etaAt (eta.go).
	etaLeft time.Duration
	etaAt   time.Time
}

// add counts e, seen at now.
func (m *meter) add(e event.Event, now time.Time) {
	if m.start.IsZero() || now.Before(m.start) {
		m.start = now
	}
	if now.After(m.last) {
		m.last = now
	}
	switch e.Kind {
	case event.PageReceived:
		m.pages++
		m.rows += max(e.Items, 0)
		m.bytes += max(e.Bytes, 0)
		if e.TotalItems > 0 {
			m.rowsTotal = e.TotalItems
		}
		m.noteETA(e, now)
	case event.SubrequestDone:
		// Sub-requests finish concurrently and their events may arrive out
		// of order; the highest count seen is the truth.
		m.subDone = max(m.subDone, e.Done)
		if e.Total > 0 {
			m.subTotal = e.Total
		}
	case event.Resumed:
		m.pages += max(e.Done, 0)
		m.rows += max(e.Items, 0)
		m.bytes += max(e.Bytes, 0)
		m.baseRows += max(e.Items, 0)
		m.baseBytes += max(e.Bytes, 0)
	case event.RetryScheduled:
		m.retries++
	case event.Stopped:
		if !interrupted(e) { // the user's Ctrl-C is no request that gave up
			m.stops++
		}
	}
}

// minRateSpan is the shortest span a rate or an ETA is computed over. The
// first page often arrives milliseconds after the first event, and its rows
// over that sliver would claim hundreds of thousands of rows a second.
const minRateSpan = time.Second

// elapsed is the span between the first and the last event.
func (m *meter) elapsed() time.Duration { return m.last.Sub(m.start) }

// perSecond is n over the elapsed span; ok is false until the span is
// minRateSpan long.
func (m *meter) perSecond(n int64) (rate float64, ok bool) {
	el := m.elapsed()
	if el < minRateSpan {
		return 0, false
	}
	return float64(n) / el.Seconds(), true
}

// rowRate and byteRate are this run's rates, without what a resumed run
// had already received.
func (m *meter) rowRate() (float64, bool)  { return m.perSecond(m.rows - m.baseRows) }
func (m *meter) byteRate() (float64, bool) { return m.perSecond(m.bytes - m.baseBytes) }

// eta estimates the time left from the sub-requests when their total is
// known, else from the rows when theirs is; ok is false otherwise.
func (m *meter) eta() (left time.Duration, ok bool) {
	el := m.elapsed()
	switch {
	case el < minRateSpan:
		return 0, false
	case m.subTotal > 0 && m.subDone > 0:
		return scale(el, int64(m.subTotal-m.subDone), int64(m.subDone)), true
	case m.subTotal == 0 && !m.etaAt.IsZero():
		return m.walkETA() // the walk's, from its quotas
	case m.rowsTotal > 0 && m.rows > m.baseRows:
		return scale(el, m.rowsTotal-m.rows, m.rows-m.baseRows), true
	}
	return 0, false
}

// scale returns el·left/done, and 0 when nothing is left.
func scale(el time.Duration, left, done int64) time.Duration {
	if left <= 0 {
		return 0
	}
	return time.Duration(float64(el) * float64(left) / float64(done))
}

// changed reports whether the meter moved since the snapshot o.
func (m *meter) changed(o meter) bool {
	return m.pages != o.pages || m.subDone != o.subDone || m.retries != o.retries ||
		m.stops != o.stops || m.rows != o.rows || m.bytes != o.bytes
}

// line renders the meter as the plain renderer's progress line:
//
//	progress: 12/40 sub-requests, 17 pages, 3400 rows, 1.2 MB, 2 retries, eta 1m20s
//
// Parts that are zero are left out so a line says only what happened.
func (m *meter) line() string {
	var parts []string
	switch {
	case m.subTotal > 0:
		parts = append(parts, strconv.Itoa(m.subDone)+"/"+strconv.Itoa(m.subTotal)+" sub-requests")
	case m.subDone > 0:
		parts = append(parts, plural(m.subDone, "sub-request", "sub-requests"))
	}
	if m.pages > 0 {
		parts = append(parts, plural(m.pages, "page", "pages"))
	}
	switch {
	case m.rowsTotal > 0:
		parts = append(parts, strconv.FormatInt(m.rows, 10)+"/"+strconv.FormatInt(m.rowsTotal, 10)+" rows")
	case m.pages > 0 || m.rows > 0:
		parts = append(parts, plural(m.rows, "row", "rows"))
	}
	if m.bytes > 0 {
		parts = append(parts, fmtBytes(m.bytes))
	}
	if m.retries > 0 {
		parts = append(parts, plural(m.retries, "retry", "retries"))
	}
	if m.stops > 0 {
		parts = append(parts, strconv.Itoa(m.stops)+" stopped")
	}
	if left, ok := m.eta(); ok && left > 0 {
		parts = append(parts, "eta "+fmtDuration(left))
	}
	if len(parts) == 0 {
		return "progress: nothing yet"
	}
	return "progress: " + strings.Join(parts, ", ")
}

package render

import (
	"time"

	"github.com/steadyhttp/steady/event"
)

// walkETA is what the last page said of the walk's ETA ([event.Event.ETA]),
// counted down by the time passed since; ok is false when no page said.
func (m *meter) walkETA() (time.Duration, bool) {
	if m.etaAt.IsZero() {
		return 0, false
	}
	return max(m.etaLeft-m.last.Sub(m.etaAt), 0), true
}

// noteETA keeps the ETA a page carries.
func (m *meter) noteETA(e event.Event, now time.Time) {
	if e.Kind == event.PageReceived && e.ETA > 0 {
		m.etaLeft, m.etaAt = e.ETA, now
	} else if e.Kind == event.PageReceived && e.TotalItems > 0 && m.rows >= e.TotalItems {
		m.etaLeft, m.etaAt = 0, now
	}
}

// parkedLine renders a Parked event of work that sleeps until a quota
// resets (one that exits says so in its error):
//
//	parked until 2026-12-02T10:00:05Z (in 42m10s): 1200 rows saved, continuing then
func parkedLine(e event.Event) (string, bool) {
	if e.Kind != event.Parked || e.Reason != event.ParkWait {
		return "", false
	}
	at := now(e).Add(e.Wait)
	if r := at.Truncate(time.Second); r.Before(at) {
		at = r.Add(time.Second)
	}
	return "parked until " + at.UTC().Format(time.RFC3339) + " (in " + fmtDuration(e.Wait) + "): " +
		plural(e.Items, "row", "rows") + " saved, continuing then", true
}

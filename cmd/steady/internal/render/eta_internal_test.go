package render

import (
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/event"
)

var etaT0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// A wait on the status line counts down as it is drawn, names its true
// cause, and is never shown shorter than it is.
func TestCountdownNamesTheCauseAndCountsDown(t *testing.T) {
	for _, c := range []struct {
		e       event.Event
		after   time.Duration
		want    string
		because string
	}{
		{event.Event{Kind: event.Waiting, Wait: 12 * time.Second, Reason: event.WaitRateLimited}, 0,
			"quota: waiting 12s for its window to reset", "a pacing hold is the quota's reset, not a server's request"},
		{event.Event{Kind: event.Waiting, Wait: 12 * time.Second, Reason: event.WaitRateLimited}, 4*time.Second + 50*time.Millisecond,
			"quota: waiting 8s for its window to reset", "4.05 s later, 7.95 s left, shown as 8s"},
		{event.Event{Kind: event.RetryScheduled, Status: 429, Wait: 10 * time.Second, Reason: event.WaitServerHint}, 3 * time.Second,
			"rate limited: waiting 7s as the server asked", "a 429's Retry-After"},
		{event.Event{Kind: event.Waiting, Wait: 2 * time.Second, Reason: event.WaitOverload}, time.Second,
			"overload: waiting 1s as the host's breaker holds", "the breaker's hold"},
		{event.Event{Kind: event.Waiting, Wait: 2 * time.Minute, Reason: event.WaitRateLimited}, 30*time.Second + time.Millisecond,
			"quota: waiting 1m30s for its window to reset", "whole seconds above a minute, rounded up"},
		{event.Event{Kind: event.Waiting, Wait: time.Second, Reason: event.WaitRateLimited}, time.Hour,
			"quota: waiting 0s for its window to reset", "a wait over is 0, never negative"},
	} {
		if got := waitPhrase(c.e, countdown(c.e.Wait, c.after)); got != c.want {
			t.Errorf("%s: %q, want %q", c.because, got, c.want)
		}
	}
}

// The rows line and the progress line show the walk's own ETA, from its
// quotas, counted down from the page that told it, rather than one
// extrapolated from the rows so far.
func TestMeterShowsTheWalksETA(t *testing.T) {
	var m meter
	m.add(event.Event{Kind: event.RequestStarted}, etaT0)
	// 100 of 1000 rows in 10 s would extrapolate to 90 s; the walk's
	// quotas say 5 minutes.
	m.add(event.Event{Kind: event.PageReceived, Items: 100, TotalItems: 1000, ETA: 5 * time.Minute}, etaT0.Add(10*time.Second))
	if left, ok := m.eta(); !ok || left != 5*time.Minute {
		t.Errorf("eta %v, %v; want the walk's 5m0s", left, ok)
	}
	m.add(event.Event{Kind: event.Waiting, Wait: time.Minute}, etaT0.Add(70*time.Second))
	if left, ok := m.eta(); !ok || left != 4*time.Minute {
		t.Errorf("a minute later: eta %v, %v; want 4m0s", left, ok)
	}
	if line := m.line(); !strings.HasSuffix(line, "eta 4m0s") {
		t.Errorf("progress line %q lacks the walk's eta", line)
	}
	m.add(event.Event{Kind: event.PageReceived, Items: 900, TotalItems: 1000}, etaT0.Add(80*time.Second))
	if left, _ := m.eta(); left != 0 {
		t.Errorf("every row received: eta %v, want 0", left)
	}
}

// A park that sleeps gets one line naming the instant, to the second,
// rounded up; one that exits gets none (its error says it).
func TestParkedLine(t *testing.T) {
	e := event.Event{Kind: event.Parked, Time: etaT0.Add(300 * time.Millisecond), Wait: 90 * time.Second, Reason: event.ParkWait, Items: 1200}
	line, ok := parkedLine(e)
	if want := "parked until 2026-12-02T10:01:31Z (in 1m30s): 1200 rows saved, continuing then"; !ok || line != want {
		t.Errorf("%q, want %q", line, want)
	}
	e.Reason = event.ParkExit
	if line, ok := parkedLine(e); ok {
		t.Errorf("a park that exits: %q", line)
	}
}

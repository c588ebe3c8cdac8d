package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/event"
)

func TestAttemptLine(t *testing.T) {
	t.Parallel()
	base := event.Event{Method: "GET", URL: "https://api.example.gov/items?page=3", MaxAttempts: 5}
	with := func(f func(*event.Event)) event.Event { e := base; f(&e); return e }
	cases := []struct {
		name string
		e    event.Event
		want string
	}{
		{"success", with(func(e *event.Event) { e.Kind, e.Attempt, e.Status = event.RequestFinished, 2, 200 }),
			"attempt 2/5 GET https://api.example.gov/items?page=3: 200"},
		{"retry after a status", with(func(e *event.Event) {
			e.Kind, e.Attempt, e.Status, e.Wait, e.Reason = event.RetryScheduled, 1, 503, 1200*time.Millisecond, event.WaitBackoff
		}), "attempt 1/5 GET https://api.example.gov/items?page=3: 503, retry in 1.2s (backoff)"},
		{"retry after a failure", with(func(e *event.Event) {
			e.Kind, e.Attempt, e.ErrClass, e.Wait, e.Reason = event.RetryScheduled, 3, "reset", 2*time.Second, event.WaitServerHint
		}), "attempt 3/5 GET https://api.example.gov/items?page=3: reset, retry in 2s (server hint)"},
		{"stopped", with(func(e *event.Event) {
			e.Kind, e.Attempt, e.Status, e.Reason = event.Stopped, 5, 503, "attempts exhausted"
		}),
			"attempt 5/5 GET https://api.example.gov/items?page=3: 503, stopped (attempts exhausted)"},
		{"stopped on a long hint", with(func(e *event.Event) {
			e.Kind, e.Attempt, e.Status, e.Wait, e.Reason = event.Stopped, 1, 429, 2*time.Hour, "server asked to wait longer than MaxRetryAfter"
		}), "attempt 1/5 GET https://api.example.gov/items?page=3: 429, retry-after 2h0m0s, stopped (server asked to wait longer than --max-retry-after)"},
		{"cancelled", with(func(e *event.Event) { e.Kind, e.Attempt, e.Reason = event.Stopped, 1, "context canceled" }),
			"attempt 1/5 GET https://api.example.gov/items?page=3: stopped (context canceled)"},
		{"hold", with(func(e *event.Event) { e.Kind, e.Wait, e.Reason = event.Waiting, 3*time.Second, event.WaitRateLimited }),
			"hold GET https://api.example.gov/items?page=3: 3s (rate limited)"},
		{"hostile text", with(func(e *event.Event) {
			e.Kind, e.Attempt, e.ErrClass, e.Reason, e.Wait = event.RetryScheduled, 1, "x\n\x1b[2J", "y\u202e", time.Second
		}), "attempt 1/5 GET https://api.example.gov/items?page=3: x??[2J, retry in 1s (y?)"},
	}
	for _, c := range cases {
		got, ok := AttemptLine(c.e)
		if !ok || got != c.want {
			t.Errorf("%s:\n got %q, %v\nwant %q", c.name, got, ok, c.want)
		}
	}
	for _, k := range []event.Kind{event.RequestStarted, event.PageReceived, event.SubrequestDone, event.QuotaSeen} {
		if line, ok := AttemptLine(event.Event{Kind: k}); ok {
			t.Errorf("%v gives an attempt line %q", k, line)
		}
	}
}

// Verbose shows every attempt, however close together, and does not repeat
// them as throttled retry lines; quiet and verbose shows attempts only.
func TestVerboseEveryAttempt(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	events := func(r event.Reporter) {
		for i := 1; i <= 3; i++ {
			r.Report(event.Event{Kind: event.RetryScheduled, Time: at, Method: "GET", URL: "https://h/x", Host: "h", Attempt: i, Status: 503, Wait: time.Millisecond, Reason: event.WaitBackoff})
		}
		r.Report(event.Event{Kind: event.RequestFinished, Time: at, Method: "GET", URL: "https://h/x", Host: "h", Attempt: 4, Status: 200})
		r.Report(event.Event{Kind: event.PageReceived, Time: at, Done: 1, Items: 10})
	}
	var b bytes.Buffer
	p := NewPlain(&b, Options{Verbose: true})
	events(p)
	p.Close()
	out := b.String()
	if got := strings.Count(out, "\nattempt ") + strings.Count(out[:min(len(out), 8)], "attempt "); got != 4 {
		t.Errorf("%d attempt lines, want 4:\n%s", got, out)
	}
	if strings.Contains(out, "retry 1") || !strings.Contains(out, "progress: 1 page") {
		t.Errorf("verbose output repeats retries or lacks progress:\n%s", out)
	}
	b.Reset()
	r := Auto(&b, Options{Quiet: true, Verbose: true})
	events(r)
	r.Close()
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 4 || strings.Contains(b.String(), "progress") {
		t.Errorf("quiet and verbose: %q; want the 4 attempt lines only", b.String())
	}
	b.Reset()
	r = Auto(&b, Options{Quiet: true})
	events(r)
	r.Close()
	if b.Len() != 0 {
		t.Errorf("quiet wrote %q", b.String())
	}
}

// A resumed run counts what was done before, says where it picks up once,
// ends at 100%, and keeps the earlier rows out of its rate and ETA.
func TestResumedCountsEarlierWork(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	p := NewPlain(&b, Options{Interval: -1})
	p.Report(event.Event{Kind: event.Resumed, Time: at, Done: 6, Items: 600})
	p.Report(event.Event{Kind: event.RequestStarted, Time: at})
	for i := 1; i <= 4; i++ {
		p.Report(event.Event{Kind: event.PageReceived, Time: at.Add(time.Duration(i) * time.Second), Done: i, Items: 100, TotalItems: 1000})
	}
	p.Close()
	got := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"resuming at row 601 (page 7)",
		"progress: 7 pages, 700/1000 rows, eta 3s",
		"progress: 8 pages, 800/1000 rows, eta 2s",
		"progress: 9 pages, 900/1000 rows, eta 1s",
		"progress: 10 pages, 1000/1000 rows",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var m meter
	m.add(event.Event{Kind: event.Resumed, Done: 6, Items: 600, Bytes: 6000}, at)
	m.add(event.Event{Kind: event.PageReceived, Items: 100, Bytes: 1000}, at.Add(2*time.Second))
	if r, ok := m.rowRate(); !ok || r != 50 {
		t.Errorf("row rate %v, %v; want 50/s, this run's rows only", r, ok)
	}
	if r, ok := m.byteRate(); !ok || r != 500 {
		t.Errorf("byte rate %v, %v; want 500/s", r, ok)
	}
}

// The first page, milliseconds after the first event, gives no rate and no
// ETA: a sliver of a second is not a measure.
func TestNoRateOverASliver(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var m meter
	m.add(event.Event{Kind: event.RequestStarted}, at)
	m.add(event.Event{Kind: event.PageReceived, Items: 1000, TotalItems: 100000}, at.Add(3*time.Millisecond))
	if r, ok := m.rowRate(); ok {
		t.Errorf("rate %v rows/s after 3ms", r)
	}
	if left, ok := m.eta(); ok {
		t.Errorf("eta %v after 3ms", left)
	}
	if line := m.line(); strings.Contains(line, "eta") {
		t.Errorf("line %q claims an ETA", line)
	}
	m.add(event.Event{Kind: event.PageReceived, Items: 1000}, at.Add(time.Second))
	if r, ok := m.rowRate(); !ok || r != 2000 {
		t.Errorf("rate %v, %v after 1s; want 2000/s", r, ok)
	}
}

// On a terminal the attempt lines go above the bars.
func TestTerminalVerbose(t *testing.T) {
	var b bytes.Buffer
	r := NewTerminal(&b, Options{Verbose: true, Width: 100})
	r.Report(event.Event{Kind: event.RetryScheduled, Method: "GET", URL: "https://h/x", Host: "h", Attempt: 1, MaxAttempts: 3, Status: 502, Wait: time.Second, Reason: event.WaitBackoff})
	r.Report(event.Event{Kind: event.RequestFinished, Method: "GET", URL: "https://h/x", Host: "h", Attempt: 2, MaxAttempts: 3, Status: 200})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"attempt 1/3 GET https://h/x: 502, retry in 1s (backoff)\n", "attempt 2/3 GET https://h/x: 200\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("terminal output lacks %q:\n%s", want, b.String())
		}
	}
}

// A continuation is told as one, not as attempt 1 of a request again.
func TestContinuationLines(t *testing.T) {
	const u = "https://data.example.gov/dump.tar"
	for _, tc := range []struct {
		e    event.Event
		want string
	}{
		{event.Event{Kind: event.RetryScheduled, Method: "GET", URL: u, Attempt: 1, MaxAttempts: 5, ErrClass: "eof", Bytes: 1048576,
			Reason: "resume at byte 1048576"}, "resume GET " + u + ": eof at byte 1048576, continuing in 0s"},
		{event.Event{Kind: event.RequestFinished, Method: "GET", URL: u, Attempt: 1, MaxAttempts: 5, Status: 206},
			"continued GET " + u + ": 206"},
	} {
		got, ok := AttemptLine(tc.e)
		if !ok || got != tc.want {
			t.Errorf("AttemptLine = %q, %v; want %q", got, ok, tc.want)
		}
	}
}

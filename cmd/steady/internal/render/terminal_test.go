package render_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

// lastFrame returns the last n lines of the terminal renderer's output: its
// final frame, since frames follow one another when the output is no
// terminal.
func lastFrame(out string, n int) []string {
	l := lines(out)
	return l[max(0, len(l)-n):]
}

func driveTerminal(r event.Reporter) {
	host := "api.example.gov"
	r.Report(event.Event{Kind: event.RequestStarted, Time: at(0), Method: "GET", URL: items, Host: host})
	for i := 1; i <= 3; i++ {
		r.Report(event.Event{Kind: event.PageReceived, Time: at(time.Duration(i) * time.Second), Done: i, Items: 100, Bytes: 50_000})
		r.Report(event.Event{Kind: event.SubrequestDone, Time: at(time.Duration(i) * time.Second), Done: i, Total: 10})
	}
	r.Report(event.Event{Kind: event.RetryScheduled, Time: at(4 * time.Second), Method: "GET", URL: items, Host: host,
		Attempt: 1, MaxAttempts: 5, Status: 429, Wait: 12 * time.Second, Reason: event.WaitRateLimited})
}

func TestTerminalFinalFrame(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf bytes.Buffer
	r := render.NewTerminal(&buf, render.Options{Width: 80, KeyHosts: []string{"api.example.gov"}})
	driveTerminal(r)
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	out := buf.String()
	frame := lastFrame(out, 3)
	if len(frame) != 3 {
		t.Fatalf("output has %d lines, want a frame of 3:\n%s", len(frame), out)
	}
	for i, want := range []string{
		"sub-requests 3/10 ",
		"rows 300 (75/s) · 150 kB (38 kB/s) · 3 pages",
		"retries 1 · rate limited: waiting 12s as the server asked",
	} {
		if !strings.HasPrefix(frame[i], want) {
			t.Errorf("frame line %d = %q, want it to start with %q", i, frame[i], want)
		}
	}
	if !strings.HasSuffix(strings.TrimRight(frame[0], " "), "30% eta 9.3s") {
		t.Errorf("sub-request bar %q lacks the percentage and eta", frame[0])
	}
	if len([]rune(frame[0])) > 80 {
		t.Errorf("sub-request bar %q is wider than 80", frame[0])
	}
	if n := strings.Count(out, "hint: api.example.gov accepts an API key; set STEADY_API_KEY to raise your rate limit\n"); n != 1 {
		t.Errorf("key hint printed %d times, want once:\n%s", n, out)
	}
}

func TestTerminalInBubble(t *testing.T) {
	// In a synctest bubble the bar library's ticker runs on virtual time,
	// and synctest.Test fails unless every goroutine it started has ended.
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		r := render.NewTerminal(&buf, render.Options{Width: 80})
		driveTerminal(r)
		time.Sleep(time.Second) // a few frames on the virtual clock
		r.Report(event.Event{Kind: event.Stopped, Time: at(5 * time.Second), Method: "GET", URL: items,
			Host: "api.example.gov", Attempt: 3, Reason: "stalled"})
		if err := r.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		out := buf.String()
		if got := lastFrame(out, 1)[0]; got != "retries 1 · stalled" {
			t.Errorf("status line = %q, want %q", got, "retries 1 · stalled")
		}
		if !strings.Contains(out, "stopped GET https://api.example.gov/items: stalled after 3 attempts\n") {
			t.Errorf("no stop line above the bars:\n%s", out)
		}
		if strings.Contains(out, "hint:") {
			t.Errorf("key hint without key hosts:\n%s", out)
		}
	})
}

func TestTerminalStatusClears(t *testing.T) {
	tests := []struct {
		name string
		next event.Event
		want string
	}{
		{"page after the wait ended",
			event.Event{Kind: event.PageReceived, Time: at(3 * time.Second), Items: 1},
			"retries 1"},
		{"page during the wait",
			event.Event{Kind: event.PageReceived, Time: at(1 * time.Second), Items: 1},
			"retries 1 · backoff: waiting 1.2s after reset"},
		{"error response after the wait",
			event.Event{Kind: event.RequestFinished, Time: at(3 * time.Second), Status: 503},
			"retries 1 · backoff: waiting 1.2s after reset"},
		{"server hint replaces backoff",
			event.Event{Kind: event.RetryScheduled, Time: at(1 * time.Second), Status: 503, Wait: 3 * time.Second, Reason: event.WaitServerHint},
			"retries 2 · server hint: waiting 3s as the server asked"},
		{"low quota",
			event.Event{Kind: event.QuotaSeen, Time: at(1 * time.Second), Remaining: 2, Reset: 30 * time.Second},
			"retries 1 · backoff: waiting 1.2s after reset · quota 2 left, resets in 30s"},
		{"low quota on the response handed back",
			event.Event{Kind: event.RequestFinished, Time: at(1 * time.Second), Status: 200, Quota: true, Remaining: 2, Reset: 30 * time.Second},
			"retries 1 · backoff: waiting 1.2s after reset · quota 2 left, resets in 30s"},
		{"a response handed back without a quota",
			event.Event{Kind: event.RequestFinished, Time: at(1 * time.Second), Status: 200, Remaining: 2},
			"retries 1 · backoff: waiting 1.2s after reset"},
		{"429 with Retry-After",
			event.Event{Kind: event.RetryScheduled, Time: at(1 * time.Second), Status: 429, Wait: 12 * time.Second, Reason: event.WaitServerHint},
			"retries 2 · rate limited: waiting 12s as the server asked"},
		{"stall in the retry package's words",
			event.Event{Kind: event.Stopped, Time: at(1 * time.Second), ErrClass: "timeout", Reason: "stalled: no data within the stall budget"},
			"retries 1 · stalled"},
		{"Retry-After too long",
			event.Event{Kind: event.Stopped, Time: at(1 * time.Second), Status: 429, Wait: 2 * time.Hour, Reason: "server asked to wait longer than MaxRetryAfter"},
			"retries 1 · stopped: server asked to wait longer than --max-retry-after (429, retry-after 2h0m0s)"},
		{"stop without stall",
			event.Event{Kind: event.Stopped, Time: at(1 * time.Second), Status: 503, Reason: "attempts exhausted"},
			"retries 1 · stopped: attempts exhausted (503)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			r := render.NewTerminal(&buf, render.Options{Width: 100})
			r.Report(event.Event{Kind: event.RetryScheduled, Time: at(0), Attempt: 1, ErrClass: "reset", Wait: 1200 * time.Millisecond, Reason: event.WaitBackoff})
			r.Report(tt.next)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if got := lastFrame(buf.String(), 1)[0]; got != tt.want {
				t.Errorf("status line = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTerminalRowsTotal(t *testing.T) {
	var buf bytes.Buffer
	r := render.NewTerminal(&buf, render.Options{Width: 100})
	r.Report(event.Event{Kind: event.RequestStarted, Time: at(0)})
	r.Report(event.Event{Kind: event.PageReceived, Time: at(2 * time.Second), Items: 250, TotalItems: 1000, Bytes: 999})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	frame := lastFrame(buf.String(), 2)
	want := "rows 250/1000 25% (125/s) eta 6s · 999 B (499 B/s) · 1 page"
	if frame[0] != want {
		t.Errorf("rows line = %q, want %q", frame[0], want)
	}
}

func TestTerminalConcurrentReportsAndClose(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf bytes.Buffer
	r := render.NewTerminal(&buf, render.Options{Width: 80})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				r.Report(event.Event{Kind: event.SubrequestDone, Time: at(time.Duration(g*50+i) * time.Millisecond), Done: g*50 + i + 1, Total: 400})
				r.Report(event.Event{Kind: event.PageReceived, Time: at(time.Duration(g*50+i) * time.Millisecond), Items: 1})
			}
		})
	}
	wg.Wait()
	done := make(chan error)
	go func() { done <- r.Close() }()
	if err := r.Close(); err != nil { // a second, concurrent Close
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.Report(event.Event{Kind: event.PageReceived, Items: 1}) // dropped, no panic
	frame := lastFrame(buf.String(), 3)
	if !strings.HasPrefix(frame[0], "sub-requests 400/400 ") || !strings.HasPrefix(frame[1], "rows 400 ") {
		t.Errorf("final frame:\n%s", strings.Join(frame, "\n"))
	}
}

package render_test

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// at returns t0 plus d, for scripting event times.
func at(d time.Duration) time.Time { return t0.Add(d) }

const items = "https://api.example.gov/items"

// lines splits rendered output into its lines.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func equalLines(t *testing.T, got string, want []string) {
	t.Helper()
	g := lines(got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n got:\n  %s\nwant:\n  %s", strings.Join(g, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestPlainScriptedSequence(t *testing.T) {
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{KeyHosts: []string{"api.example.gov"}})
	events := []event.Event{
		{Kind: event.RequestStarted, Time: at(0), Method: "GET", URL: items + "?page=1", Host: "api.example.gov", Attempt: 1, MaxAttempts: 5},
		{Kind: event.PageReceived, Time: at(200 * time.Millisecond), Done: 1, Items: 100, Bytes: 20_000},
		{Kind: event.RetryScheduled, Time: at(500 * time.Millisecond), Method: "GET", URL: items + "?page=2", Host: "api.example.gov",
			Attempt: 1, MaxAttempts: 5, Status: 503, Wait: 1234 * time.Millisecond, Reason: event.WaitBackoff},
		// Within a second of the last retry line for this host: held back.
		{Kind: event.RetryScheduled, Time: at(700 * time.Millisecond), Method: "GET", URL: items + "?page=9", Host: "api.example.gov",
			Attempt: 1, MaxAttempts: 5, Status: 503, Wait: 800 * time.Millisecond, Reason: event.WaitBackoff},
		{Kind: event.RetryScheduled, Time: at(2 * time.Second), Method: "GET", URL: items + "?page=2", Host: "api.example.gov",
			Attempt: 2, MaxAttempts: 5, ErrClass: "reset", Wait: 2500 * time.Millisecond, Reason: event.WaitBackoff},
		// Not five seconds since the last progress line: no line.
		{Kind: event.PageReceived, Time: at(3 * time.Second), Done: 2, Items: 100, Bytes: 20_000},
		{Kind: event.RetryScheduled, Time: at(4 * time.Second), Method: "GET", URL: items + "?page=3", Host: "api.example.gov",
			Attempt: 1, MaxAttempts: 5, Status: 429, Wait: 12 * time.Second, Reason: event.WaitRateLimited},
		{Kind: event.Waiting, Time: at(4500 * time.Millisecond), Method: "GET", URL: items + "?page=4", Host: "api.example.gov",
			Wait: 3 * time.Second, Reason: event.WaitRateLimited},
		{Kind: event.QuotaSeen, Time: at(5 * time.Second), Host: "api.example.gov", Remaining: 3, Reset: 45 * time.Second},
		// A quota that is not low says nothing.
		{Kind: event.QuotaSeen, Time: at(5 * time.Second), Host: "other.example.org", Remaining: 500, Reset: time.Minute},
		// A second 429: the hint was already given.
		{Kind: event.RetryScheduled, Time: at(6 * time.Second), Method: "GET", URL: items + "?page=3", Host: "api.example.gov",
			Attempt: 2, MaxAttempts: 5, Status: 429, Wait: 12 * time.Second, Reason: event.WaitRateLimited},
		{Kind: event.PageReceived, Time: at(6 * time.Second), Done: 3, Items: 100, Bytes: 20_000},
		{Kind: event.Stopped, Time: at(7 * time.Second), Method: "GET", URL: items + "?page=4", Host: "api.example.gov",
			Attempt: 5, Status: 503, Reason: "attempts exhausted"},
		{Kind: event.RequestFinished, Time: at(7 * time.Second), Method: "GET", URL: items + "?page=4", Host: "api.example.gov", Attempt: 5, Status: 503},
	}
	for _, e := range events {
		p.Report(e)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	equalLines(t, buf.String(), []string{
		"progress: 1 page, 100 rows, 20 kB",
		"retry 1/4 GET https://api.example.gov/items?page=2: 503, waiting 1.2s (backoff)",
		"retry 2/4 GET https://api.example.gov/items?page=2: reset, waiting 2.5s (backoff) [+1 similar]",
		"retry 1/4 GET https://api.example.gov/items?page=3: 429, waiting 12s (rate limited)",
		"hint: api.example.gov accepts an API key; set STEADY_API_KEY to raise your rate limit",
		"waiting GET https://api.example.gov/items?page=4: 3s (rate limited)",
		"quota low api.example.gov: 3 left, resets in 45s",
		"retry 2/4 GET https://api.example.gov/items?page=3: 429, waiting 12s (rate limited)",
		"progress: 3 pages, 300 rows, 60 kB, 5 retries",
		"stopped GET https://api.example.gov/items?page=4: attempts exhausted after 5 attempts (503)",
		"progress: 3 pages, 300 rows, 60 kB, 5 retries, 1 stopped",
	})

	// After Close, events are dropped and Close answers the same.
	before := buf.Len()
	p.Report(event.Event{Kind: event.Stopped, Time: at(time.Minute), Reason: "stalled"})
	if err := p.Close(); err != nil || buf.Len() != before {
		t.Errorf("after Close: err %v, %d bytes written", err, buf.Len()-before)
	}
}

func TestPlainLineForms(t *testing.T) {
	long := items + "?sites=" + strings.Repeat("0123456789,", 30)
	tests := []struct {
		name string
		e    event.Event
		want string
	}{
		{"retry without a known limit",
			event.Event{Kind: event.RetryScheduled, Method: "GET", URL: items, Attempt: 3, Status: 502, Wait: 250 * time.Millisecond, Reason: event.WaitBackoff},
			"retry 3 GET https://api.example.gov/items: 502, waiting 250ms (backoff)"},
		{"retry with a server hint",
			event.Event{Kind: event.RetryScheduled, Method: "GET", URL: items, Attempt: 1, MaxAttempts: 3, Status: 503, Wait: 3 * time.Second, Reason: event.WaitServerHint},
			"retry 1/2 GET https://api.example.gov/items: 503, waiting 3s (server hint)"},
		{"retry without status or class",
			event.Event{Kind: event.RetryScheduled, Method: "GET", URL: items, Attempt: 1, Wait: 90 * time.Second},
			"retry 1 GET https://api.example.gov/items: failed, waiting 1m30s"},
		{"retry of a host without URL",
			event.Event{Kind: event.RetryScheduled, Host: "api.example.gov", Attempt: 1, ErrClass: "timeout", Wait: time.Second, Reason: event.WaitBackoff},
			"retry 1 api.example.gov: timeout, waiting 1s (backoff)"},
		{"stopped stalled after one attempt",
			event.Event{Kind: event.Stopped, Method: "GET", URL: items, Attempt: 1, ErrClass: "timeout", Reason: "stalled"},
			"stopped GET https://api.example.gov/items: stalled after 1 attempt (timeout)"},
		{"stopped on a Retry-After too long",
			event.Event{Kind: event.Stopped, Method: "GET", URL: items, Attempt: 1, Status: 429, Wait: 90 * time.Minute, Reason: "server asked to wait longer than MaxRetryAfter"},
			"stopped GET https://api.example.gov/items: server asked to wait longer than --max-retry-after after 1 attempt (429, retry-after 1h30m0s)"},
		{"stopped without reason",
			event.Event{Kind: event.Stopped, Method: "POST", URL: items},
			"stopped POST https://api.example.gov/items: gave up"},
		{"waiting without reason",
			event.Event{Kind: event.Waiting, Method: "GET", URL: items, Wait: 400 * time.Microsecond},
			"waiting GET https://api.example.gov/items: 1ms"},
		{"quota low without reset",
			event.Event{Kind: event.QuotaSeen, URL: items, Remaining: 0},
			"quota low api.example.gov: 0 left"},
		{"long URL cut",
			event.Event{Kind: event.Waiting, Method: "GET", URL: long, Wait: time.Second, Reason: event.WaitRateLimited},
			"waiting GET " + long[:120] + "...: 1s (rate limited)"},
		{"control characters from the network",
			event.Event{Kind: event.Stopped, Method: "GET", URL: items, Reason: "bad\nretry 9/9 forged\x1b[2J"},
			"stopped GET https://api.example.gov/items: bad?retry 9/9 forged?[2J"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			p := render.NewPlain(&buf, render.Options{})
			tt.e.Time = t0
			p.Report(tt.e)
			p.Close()
			want := []string{tt.want}
			if f := finalLine(tt.e.Kind); f != "" {
				want = append(want, f)
			}
			equalLines(t, buf.String(), want)
		})
	}
}

// finalLine is the progress line Close prints after a single event of kind.
func finalLine(k event.Kind) string {
	switch k {
	case event.RetryScheduled:
		return "progress: 1 retry"
	case event.Stopped:
		return "progress: 1 stopped"
	}
	return ""
}

func TestPlainSubrequests(t *testing.T) {
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{})
	p.Report(event.Event{Kind: event.RequestStarted, Time: at(0), Method: "GET", URL: items})
	for i := 1; i <= 4; i++ {
		p.Report(event.Event{Kind: event.SubrequestDone, Time: at(time.Duration(i) * time.Second), Done: i, Total: 4})
	}
	p.Close()
	// The first line comes at once, the last one because it is the last;
	// Close has nothing new to say.
	equalLines(t, buf.String(), []string{
		"progress: 1/4 sub-requests, eta 3s",
		"progress: 4/4 sub-requests",
	})
}

func TestPlainThrottlesByTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		p := render.NewPlain(&buf, render.Options{Interval: 5 * time.Second})
		// Twenty pages, one a second, stamped by the (virtual) clock.
		for i := 1; i <= 20; i++ {
			event.Emit(p, event.Event{Kind: event.PageReceived, Done: i, Items: 10})
			time.Sleep(time.Second)
		}
		// Ten retries in a second from one host make one line; the next,
		// a second later, says how many were held back.
		for range 10 {
			event.Emit(p, event.Event{Kind: event.RetryScheduled, Host: "api.example.gov", Attempt: 1, Status: 503, Wait: time.Second, Reason: event.WaitBackoff})
			time.Sleep(100 * time.Millisecond)
		}
		event.Emit(p, event.Event{Kind: event.RetryScheduled, Host: "api.example.gov", Attempt: 2, Status: 503, Wait: 2 * time.Second, Reason: event.WaitBackoff})
		// Another host is another story.
		event.Emit(p, event.Event{Kind: event.RetryScheduled, Host: "b.example.org", Attempt: 1, Status: 503, Wait: time.Second, Reason: event.WaitBackoff})
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		equalLines(t, buf.String(), []string{
			"progress: 1 page, 10 rows",    // t=0
			"progress: 6 pages, 60 rows",   // t=5
			"progress: 11 pages, 110 rows", // t=10
			"progress: 16 pages, 160 rows", // t=15
			"retry 1 api.example.gov: 503, waiting 1s (backoff)",
			"retry 2 api.example.gov: 503, waiting 2s (backoff) [+9 similar]",
			"retry 1 b.example.org: 503, waiting 1s (backoff)",
			"progress: 20 pages, 200 rows, 12 retries",
		})
	})
}

func TestPlainEvery(t *testing.T) {
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{Every: 3})
	for i := 1; i <= 7; i++ {
		p.Report(event.Event{Kind: event.PageReceived, Time: t0, Done: i, Items: 1})
	}
	p.Close()
	equalLines(t, buf.String(), []string{
		"progress: 3 pages, 3 rows",
		"progress: 6 pages, 6 rows",
		"progress: 7 pages, 7 rows",
	})
}

func TestPlainNoThrottle(t *testing.T) {
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{Interval: -1, NoticeInterval: -1, QuotaLow: -1})
	for i := 1; i <= 3; i++ {
		p.Report(event.Event{Kind: event.PageReceived, Time: t0, Done: i, Items: 1})
		p.Report(event.Event{Kind: event.Waiting, Time: t0, Host: "h", Wait: time.Second})
		p.Report(event.Event{Kind: event.QuotaSeen, Time: t0, Host: "h", Remaining: 0})
	}
	p.Close()
	equalLines(t, buf.String(), []string{
		"progress: 1 page, 1 row",
		"waiting h: 1s",
		"progress: 2 pages, 2 rows",
		"waiting h: 1s",
		"progress: 3 pages, 3 rows",
		"waiting h: 1s",
	})
}

func TestPlainQuietOnSuccess(t *testing.T) {
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{})
	p.Report(event.Event{Kind: event.RequestStarted, Time: t0, Method: "GET", URL: items})
	p.Report(event.Event{Kind: event.RequestFinished, Time: t0, Method: "GET", URL: items, Status: 200, Attempt: 1})
	p.Report(event.Event{Kind: event.QuotaSeen, Time: t0, Host: "api.example.gov", Remaining: -1})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("a plain request that succeeded printed %q", buf.String())
	}
}

type failingWriter struct{ writes int }

func (w *failingWriter) Write([]byte) (int, error) {
	w.writes++
	return 0, errors.New("broken pipe")
}

func TestPlainWriteErrorStopsWriting(t *testing.T) {
	w := &failingWriter{}
	p := render.NewPlain(w, render.Options{NoticeInterval: -1})
	for range 3 {
		p.Report(event.Event{Kind: event.Stopped, Time: t0, Reason: "stalled"})
	}
	if err := p.Close(); err == nil || err.Error() != "broken pipe" {
		t.Errorf("Close = %v, want the write error", err)
	}
	if w.writes != 1 {
		t.Errorf("%d writes after a failed one, want 1 in all", w.writes)
	}
}

func TestPlainConcurrentReports(t *testing.T) {
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{Interval: time.Hour})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				p.Report(event.Event{Kind: event.PageReceived, Time: t0.Add(time.Duration(g*100+i) * time.Millisecond), Items: 2, Bytes: 10})
			}
		})
	}
	wg.Wait()
	p.Close()
	got := lines(buf.String())
	if len(got) != 2 || got[1] != "progress: 800 pages, 1600 rows, 8.0 kB" {
		t.Errorf("lines = %q, want a first line and %q", got, "progress: 800 pages, 1600 rows, 8.0 kB")
	}
}

// TestPlainQuotaOnRequestFinished: the quota of the response handed back
// rides on its RequestFinished (Quota set) and is shown as a QuotaSeen's
// is; a RequestFinished without Quota says nothing, whatever its Remaining.
func TestPlainQuotaOnRequestFinished(t *testing.T) {
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{Interval: -1})
	p.Report(event.Event{Kind: event.RequestFinished, Time: t0, Host: "h", Status: 200, Remaining: 0})
	p.Report(event.Event{Kind: event.RequestFinished, Time: t0, Host: "api.example.gov", Status: 200,
		Quota: true, Remaining: 3, Reset: 45 * time.Second})
	p.Report(event.Event{Kind: event.RequestFinished, Time: t0, Host: "other.example.org", Status: 200,
		Quota: true, Remaining: 500, Reset: time.Minute})
	p.Close()
	equalLines(t, buf.String(), []string{"quota low api.example.gov: 3 left, resets in 45s"})
}

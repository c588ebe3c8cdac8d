package render_test

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

// linePrefixes are the words every plain line starts with; a grep for them
// must find every line and nothing a server sent may start a line of its own.
var linePrefixes = []string{"retry", "waiting", "stopped", "quota low", "hint: ", "progress: "}

// FuzzPlainLines feeds text as a server or a failing network could shape it
// (URLs from next links, error texts, reasons) through every kind of line and
// checks that each event stays on its own lines, free of control characters.
func FuzzPlainLines(f *testing.F) {
	f.Add("GET", "https://api.example.gov/items?page=3", "api.example.gov", "backoff", "reset", "read: connection reset", 503, 2)
	f.Add("GET", "https://api.example.gov/items\n?x=1", "api.example.gov", "stalled\nprogress: forged", "", "", 429, 1)
	f.Add("", "", "", "", "", "", 0, 0)
	f.Add("P\x1bOST", "https://h/\u2028\u0085", "H:443", "\x00", "\r", "\t", -1, -5)
	f.Fuzz(func(t *testing.T, method, url, host, reason, errClass, errText string, status, attempt int) {
		var buf bytes.Buffer
		p := render.NewPlain(&buf, render.Options{
			Interval: -1, NoticeInterval: -1, KeyHosts: []string{host, "api.example.gov"},
		})
		base := event.Event{Time: t0, Method: method, URL: url, Host: host, Reason: reason,
			ErrClass: errClass, Err: errText, Status: status, Attempt: attempt, MaxAttempts: attempt + 1,
			Wait: time.Duration(attempt) * time.Second, Remaining: 0}
		for _, k := range []event.Kind{event.RetryScheduled, event.Waiting, event.Stopped,
			event.QuotaSeen, event.PageReceived, event.SubrequestDone, event.RequestFinished} {
			e := base
			e.Kind = k
			p.Report(e)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !strings.HasSuffix(out, "\n") {
			t.Fatalf("output does not end a line: %q", out)
		}
		// retry, waiting, stopped, quota, a progress line for the page and
		// one for the sub-request (Close has nothing new to add), and the
		// hint when the status is 429.
		want := 6
		got := lines(out)
		switch {
		case status == 429 && plainHostName(host):
			want++
		case status == 429 && len(got) == want+1:
			// A degenerate host ("." or a name of control characters)
			// normalizes to nothing and never earns the hint; any other
			// host may, after normalization.
			want++
		}
		if len(got) != want {
			t.Fatalf("%d lines, want %d: %q", len(got), want, out)
		}
		for _, line := range got {
			unsafe := func(r rune) bool {
				return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Bidi_Control)
			}
			if strings.IndexFunc(line, unsafe) >= 0 {
				t.Fatalf("control or separator character in line %q", line)
			}
			ok := false
			for _, p := range linePrefixes {
				ok = ok || strings.HasPrefix(line, p)
			}
			if !ok {
				t.Fatalf("line %q starts with no known word", line)
			}
		}
	})
}

// plainHostName reports whether h is an ordinary lower-case DNS name, which
// a key hint must match.
func plainHostName(h string) bool {
	if h == "" || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

package render_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The plain download renderer prints size, share, rate, time left and the
// resumes, at most once per interval, and a last line on Close.
func TestDownloadLines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		d := render.NewDownloadLines(&out, render.Options{Interval: 10 * time.Second})
		d.Begin(1000, 11000)
		for range 20 {
			time.Sleep(time.Second)
			d.Add(250) // 250 B/s
		}
		d.Report(event.Event{Kind: event.RetryScheduled, Method: "GET", URL: "http://x/f", Reason: "resume at byte 6000", Bytes: 6000})
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var progressLines []string
		for _, l := range lines {
			if strings.HasPrefix(l, "download: ") {
				progressLines = append(progressLines, l)
			}
		}
		if len(progressLines) != 3 {
			t.Fatalf("want 2 interval lines and a last one, got:\n%s", out.String())
		}
		want := "download: 3.5 kB/11 kB 31% (250 B/s) eta 30s · continued from 1.0 kB · 0 resumes"
		if progressLines[0] != want {
			t.Errorf("first line\n got %q\nwant %q", progressLines[0], want)
		}
		if last := progressLines[2]; !strings.Contains(last, "6.0 kB/11 kB 54%") || !strings.Contains(last, "1 resume") || strings.Contains(last, "eta") {
			t.Errorf("last line %q: want the total so far, 1 resume, no eta", last)
		}
		if !strings.Contains(out.String(), "resume at byte 6000") {
			t.Errorf("the resume's event line is missing:\n%s", out.String())
		}
	})
}

// The bar draws sizes and the resume count.
func TestDownloadBar(t *testing.T) {
	var out lockedBuffer
	d := render.NewDownloadBar(&out, render.Options{Width: 100})
	d.Begin(0, 4096)
	d.Add(2048)
	d.Report(event.Event{Kind: event.RetryScheduled, Reason: "resume at byte 2048", Bytes: 2048})
	d.Add(2048)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "4.1 kB/4.1 kB") || !strings.Contains(s, "1 resume") || !strings.Contains(s, "100 %") {
		t.Errorf("final frame lacks the size, 100%% or the resume:\n%q", s)
	}
	// One unit system: the decimal units of every other line.
	if strings.Contains(s, "KiB") || strings.Contains(s, "MiB") || strings.Contains(s, "KB") {
		t.Errorf("the bar mixes binary or upper-case units into the decimal ones:\n%q", s)
	}
	if last := lastFrame(s, 1)[0]; strings.Contains(last, "waiting") {
		t.Errorf("the final frame still shows a wait the bytes after it ended: %q", last)
	}
}

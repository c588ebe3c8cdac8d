package render_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

// The user's own Ctrl-C stops every request in flight; the renderers say
// nothing of those stops but the status, and the command says it once.
func TestInterruptIsNotALine(t *testing.T) {
	stop := event.Event{Kind: event.Stopped, Time: at(time.Second), Method: "GET", URL: items,
		Host: "api.example.gov", Attempt: 1, Reason: context.Canceled.Error(), Stop: context.Canceled}
	t.Run("plain", func(t *testing.T) {
		var buf bytes.Buffer
		p := render.NewPlain(&buf, render.Options{})
		p.Report(stop)
		p.Report(stop)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "stopped") || strings.Contains(buf.String(), "canceled") {
			t.Errorf("plain lines tell the interrupt:\n%s", buf.String())
		}
	})
	t.Run("terminal", func(t *testing.T) {
		var buf bytes.Buffer
		r := render.NewTerminal(&buf, render.Options{Width: 100})
		r.Report(stop)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.Contains(out, "canceled") || strings.Contains(out, "stopped GET") {
			t.Errorf("the bars tell the interrupt in the library's words:\n%s", out)
		}
		if got := lastFrame(out, 1)[0]; got != "retries 0 · interrupted" {
			t.Errorf("status line %q, want it to say interrupted", got)
		}
	})
}

// A hold the client takes itself is not told as the server's request.
func TestPacingHoldIsNotTheServers(t *testing.T) {
	var buf bytes.Buffer
	r := render.NewTerminal(&buf, render.Options{Width: 100})
	r.Report(event.Event{Kind: event.Waiting, Time: at(0), Wait: 3 * time.Second, Reason: event.WaitRateLimited})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := lastFrame(buf.String(), 1)[0]; got != "retries 0 · quota: waiting 3s for its window to reset" {
		t.Errorf("status line %q", got)
	}
}

// Lines said through the renderer come out once, above the final frame,
// and a write split mid-line is held until its newline.
func TestLinesGoAboveTheBars(t *testing.T) {
	var buf bytes.Buffer
	r := render.NewTerminal(&buf, render.Options{Width: 100})
	w := render.Lines(r, nil)
	r.Report(event.Event{Kind: event.PageReceived, Time: at(time.Second), Items: 10, Bytes: 100})
	fmt.Fprint(w, "detected: pages")
	fmt.Fprint(w, " linked\nsecond line\n")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, l := range []string{"detected: pages linked\n", "second line\n"} {
		if n := strings.Count(out, l); n != 1 {
			t.Errorf("%q appears %d times, want once:\n%s", l, n, out)
		}
	}
	frame := lastFrame(out, 2)
	if !strings.HasPrefix(frame[0], "rows 10 ") {
		t.Errorf("the said lines are not above the final frame:\n%s", out)
	}
	var plain bytes.Buffer
	if w := render.Lines(render.NewPlain(&plain, render.Options{}), nil); w == nil {
		t.Error("the plain renderer says no lines")
	}
	var fallback bytes.Buffer
	if w := render.Lines(render.Discard, &fallback); w != &fallback {
		t.Error("a renderer that draws nothing does not fall back to the writer given")
	}
}

func TestFormatBytesIsDecimal(t *testing.T) {
	for n, want := range map[int64]string{999: "999 B", 4096: "4.1 kB", 12_300_000: "12 MB", 1_500_000_000: "1.5 GB"} {
		if got := render.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

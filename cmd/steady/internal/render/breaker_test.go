package render_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

const gov = "api.example.gov"

// breakerStory is an outage as the breaker reports it: open after 12 of
// 20 calls failed, half-open, open again when the probe failed, closed,
// with two limit changes a tenth of a second apart (the first with a
// learned quota of 50 per 5 s).
func breakerStory(r event.Reporter) {
	changed := func(d time.Duration, reason string, wait time.Duration, done, total int) {
		r.Report(event.Event{Kind: event.BreakerChanged, Time: at(d), Host: gov, Reason: reason, Wait: wait, Done: done, Total: total})
	}
	changed(0, "open", 5*time.Second, 12, 20)
	changed(5*time.Second, "half-open", 0, 0, 0)
	changed(5100*time.Millisecond, "open", 10*time.Second, 0, 0)
	changed(15*time.Second, "half-open", 0, 0, 0)
	changed(15200*time.Millisecond, "closed", 0, 0, 0)
	changed(16*time.Second, "limit", 5*time.Second, 50, 4)
	changed(16100*time.Millisecond, "limit", 0, 0, 8)
}

var breakerLines = []string{
	"breaker open: api.example.gov; 12 of 20 calls failed, retry in 5s",
	"breaker half-open: api.example.gov; probing",
	"breaker open: api.example.gov; the probe failed, retry in 10s",
	"breaker half-open: api.example.gov; probing",
	"breaker closed: api.example.gov; the probe passed",
	"breaker limit: api.example.gov; 4 in flight, 50 per 5s learned",
}

// Plain prints every state change and holds limit changes to one per host
// and notice interval.
func TestPlainBreakerLines(t *testing.T) {
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{})
	breakerStory(p)
	p.Report(event.Event{Kind: event.BreakerChanged, Time: at(20 * time.Second), Host: gov, Reason: "limit"})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	equalLines(t, buf.String(), append(breakerLines, "breaker limit: api.example.gov; no limit [+1 similar]"))
}

// Verbose shows every change, limit changes included, once each; quiet and
// verbose shows them among the attempt lines.
func TestVerboseBreakerLines(t *testing.T) {
	want := append(breakerLines, "breaker limit: api.example.gov; 8 in flight")
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{Verbose: true})
	breakerStory(p)
	p.Close()
	equalLines(t, buf.String(), want)

	buf.Reset()
	r := render.Auto(&buf, render.Options{Quiet: true, Verbose: true})
	breakerStory(r)
	r.Close()
	equalLines(t, buf.String(), want)
}

func TestTerminalBreakerLines(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf bytes.Buffer
	r := render.NewTerminal(&buf, render.Options{Width: 80})
	breakerStory(r)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, l := range breakerLines {
		if !strings.Contains(out, l+"\n") {
			t.Errorf("terminal output lacks %q:\n%s", l, out)
		}
	}
	if strings.Contains(out, "8 in flight") {
		t.Errorf("terminal output shows the held-back limit change:\n%s", out)
	}
}

// A host name is network text: it cannot forge a line or move the cursor.
func TestBreakerLineHostile(t *testing.T) {
	e := event.Event{Kind: event.BreakerChanged, Time: at(0), Host: "evil\n\x1b[2Jhost\u202e", Reason: "closed"}
	got, ok := render.AttemptLine(e)
	if want := "breaker closed: evil??[2Jhost?; the probe passed"; !ok || got != want {
		t.Errorf("AttemptLine = %q, %v; want %q", got, ok, want)
	}
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{})
	p.Report(e)
	p.Close()
	equalLines(t, buf.String(), []string{"breaker closed: evil??[2Jhost?; the probe passed"})
}

package render_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

func TestKeyHint(t *testing.T) {
	const hint = "hint: api.example.gov accepts an API key; set STEADY_API_KEY to raise your rate limit"
	keyHosts := []string{"api.example.gov"}
	r429 := event.Event{Kind: event.RetryScheduled, Method: "GET", URL: items, Host: "api.example.gov",
		Attempt: 1, Status: 429, Wait: time.Second, Reason: event.WaitRateLimited}
	with := func(e event.Event, f func(*event.Event)) event.Event { f(&e); return e }

	tests := []struct {
		name   string
		opt    render.Options
		events []event.Event
		want   int // hint lines
	}{
		{"429 from a key host without a key", render.Options{KeyHosts: keyHosts}, []event.Event{r429}, 1},
		{"key set", render.Options{KeyHosts: keyHosts, KeySet: true}, []event.Event{r429}, 0},
		{"no key hosts", render.Options{}, []event.Event{r429}, 0},
		{"host does not accept a key", render.Options{KeyHosts: []string{"data.example.org"}}, []event.Event{r429}, 0},
		{"lookalike host", render.Options{KeyHosts: keyHosts},
			[]event.Event{with(r429, func(e *event.Event) { e.Host = "api.example.gov.evil.com" })}, 0},
		{"503 from a key host", render.Options{KeyHosts: keyHosts},
			[]event.Event{with(r429, func(e *event.Event) { e.Status = 503; e.Reason = event.WaitBackoff })}, 0},
		{"rate-limit pacing without a 429", render.Options{KeyHosts: keyHosts},
			[]event.Event{{Kind: event.Waiting, Host: "api.example.gov", Wait: time.Second, Reason: event.WaitRateLimited}}, 0},
		{"case and port of the host", render.Options{KeyHosts: []string{"API.Example.gov"}},
			[]event.Event{with(r429, func(e *event.Event) { e.Host = "api.example.gov:443" })}, 1},
		{"host from the URL", render.Options{KeyHosts: keyHosts},
			[]event.Event{with(r429, func(e *event.Event) { e.Host = "" })}, 1},
		{"final 429 handed back", render.Options{KeyHosts: keyHosts},
			[]event.Event{{Kind: event.RequestFinished, Host: "api.example.gov", Status: 429, Attempt: 5}}, 1},
		{"at most once", render.Options{KeyHosts: keyHosts}, []event.Event{r429, r429, r429}, 1},
		{"only after the 429", render.Options{KeyHosts: keyHosts},
			[]event.Event{{Kind: event.RequestStarted, Host: "api.example.gov"}, {Kind: event.QuotaSeen, Host: "api.example.gov", Remaining: 0}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			p := render.NewPlain(&buf, tt.opt)
			for _, e := range tt.events {
				e.Time = t0
				p.Report(e)
			}
			p.Close()
			if got := strings.Count(buf.String(), "hint: "); got != tt.want {
				t.Errorf("%d hint lines, want %d:\n%s", got, tt.want, buf.String())
			}
			if tt.want == 1 && !strings.Contains(buf.String(), hint+"\n") {
				t.Errorf("hint text differs:\n%s", buf.String())
			}
		})
	}
}

func TestKeyHintNamesTheVariable(t *testing.T) {
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{KeyHosts: []string{"api.example.gov"}, KeyEnv: "USGS_API_KEY"})
	p.Report(event.Event{Kind: event.Stopped, Time: t0, Host: "api.example.gov", Status: 429, Reason: "retry-after too long"})
	p.Close()
	want := "hint: api.example.gov accepts an API key; set USGS_API_KEY to raise your rate limit"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, buf.String())
	}
}

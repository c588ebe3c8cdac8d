package progress_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/progress"
)

func TestKeyHint(t *testing.T) {
	const hint = "hint: api.example.gov accepts an API key; set STEADY_API_KEY to raise your rate limit"
	keyHosts := []string{"api.example.gov"}
	r429 := progress.Event{Kind: progress.RetryScheduled, Method: "GET", URL: items, Host: "api.example.gov",
		Attempt: 1, Status: 429, Wait: time.Second, Reason: progress.WaitRateLimited}
	with := func(e progress.Event, f func(*progress.Event)) progress.Event { f(&e); return e }

	tests := []struct {
		name   string
		opt    progress.Options
		events []progress.Event
		want   int // hint lines
	}{
		{"429 from a key host without a key", progress.Options{KeyHosts: keyHosts}, []progress.Event{r429}, 1},
		{"key set", progress.Options{KeyHosts: keyHosts, KeySet: true}, []progress.Event{r429}, 0},
		{"no key hosts", progress.Options{}, []progress.Event{r429}, 0},
		{"host does not accept a key", progress.Options{KeyHosts: []string{"data.example.org"}}, []progress.Event{r429}, 0},
		{"lookalike host", progress.Options{KeyHosts: keyHosts},
			[]progress.Event{with(r429, func(e *progress.Event) { e.Host = "api.example.gov.evil.com" })}, 0},
		{"503 from a key host", progress.Options{KeyHosts: keyHosts},
			[]progress.Event{with(r429, func(e *progress.Event) { e.Status = 503; e.Reason = progress.WaitBackoff })}, 0},
		{"rate-limit pacing without a 429", progress.Options{KeyHosts: keyHosts},
			[]progress.Event{{Kind: progress.Waiting, Host: "api.example.gov", Wait: time.Second, Reason: progress.WaitRateLimited}}, 0},
		{"case and port of the host", progress.Options{KeyHosts: []string{"API.Example.gov"}},
			[]progress.Event{with(r429, func(e *progress.Event) { e.Host = "api.example.gov:443" })}, 1},
		{"host from the URL", progress.Options{KeyHosts: keyHosts},
			[]progress.Event{with(r429, func(e *progress.Event) { e.Host = "" })}, 1},
		{"final 429 handed back", progress.Options{KeyHosts: keyHosts},
			[]progress.Event{{Kind: progress.RequestFinished, Host: "api.example.gov", Status: 429, Attempt: 5}}, 1},
		{"at most once", progress.Options{KeyHosts: keyHosts}, []progress.Event{r429, r429, r429}, 1},
		{"only after the 429", progress.Options{KeyHosts: keyHosts},
			[]progress.Event{{Kind: progress.RequestStarted, Host: "api.example.gov"}, {Kind: progress.QuotaSeen, Host: "api.example.gov", Remaining: 0}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			p := progress.NewPlain(&buf, tt.opt)
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
	p := progress.NewPlain(&buf, progress.Options{KeyHosts: []string{"api.example.gov"}, KeyEnv: "USGS_API_KEY"})
	p.Report(progress.Event{Kind: progress.Stopped, Time: t0, Host: "api.example.gov", Status: 429, Reason: "retry-after too long"})
	p.Close()
	want := "hint: api.example.gov accepts an API key; set USGS_API_KEY to raise your rate limit"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, buf.String())
	}
}

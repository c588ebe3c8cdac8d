package render_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

// The renderers sit on the request path (Report is called by the transport),
// so their cost per event matters most for the common, throttled case.

var benchPage = event.Event{Kind: event.PageReceived, Time: t0, Done: 1, Items: 100, Bytes: 20_000}

var benchRetry = event.Event{Kind: event.RetryScheduled, Time: t0, Method: "GET", URL: items + "?page=3",
	Host: "api.example.gov", Attempt: 1, MaxAttempts: 5, Status: 503, Wait: time.Second, Reason: event.WaitBackoff}

func BenchmarkPlainReportThrottled(b *testing.B) {
	p := render.NewPlain(io.Discard, render.Options{})
	defer p.Close()
	b.ReportAllocs()
	for b.Loop() {
		p.Report(benchPage)
		p.Report(benchRetry)
	}
}

func BenchmarkPlainReportEveryLine(b *testing.B) {
	p := render.NewPlain(io.Discard, render.Options{Interval: -1, NoticeInterval: -1})
	defer p.Close()
	b.ReportAllocs()
	for b.Loop() {
		p.Report(benchPage)
		p.Report(benchRetry)
	}
}

func BenchmarkTerminalReport(b *testing.B) {
	r := render.NewTerminal(io.Discard, render.Options{Width: 80})
	defer r.Close()
	b.ReportAllocs()
	for b.Loop() {
		r.Report(benchPage)
		r.Report(benchRetry)
	}
}

func BenchmarkTallyReport(b *testing.B) {
	var t render.Tally
	b.ReportAllocs()
	for b.Loop() {
		t.Report(benchPage)
		t.Report(benchRetry)
	}
}

func BenchmarkSlogReport(b *testing.B) {
	r := event.Slog(slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.ReportAllocs()
	for b.Loop() {
		r.Report(benchPage) // Debug: filtered out
		r.Report(benchRetry)
	}
}

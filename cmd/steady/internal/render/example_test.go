package render_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

func ExampleNewPlain() {
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	r := render.NewPlain(os.Stdout, render.Options{KeyHosts: []string{"api.example.gov"}})
	events := []event.Event{
		{Kind: event.SubrequestDone, Time: start.Add(2 * time.Second), Done: 1, Total: 4},
		{Kind: event.RetryScheduled, Time: start.Add(3 * time.Second), Method: "GET",
			URL: "https://api.example.gov/items?page=3", Host: "api.example.gov",
			Attempt: 2, MaxAttempts: 5, Status: 503, Wait: 1200 * time.Millisecond, Reason: event.WaitBackoff},
		{Kind: event.RetryScheduled, Time: start.Add(4 * time.Second), Method: "GET",
			URL: "https://api.example.gov/items?page=4", Host: "api.example.gov",
			Attempt: 1, MaxAttempts: 5, Status: 429, Wait: 12 * time.Second, Reason: event.WaitRateLimited},
		{Kind: event.SubrequestDone, Time: start.Add(20 * time.Second), Done: 4, Total: 4},
	}
	for _, e := range events {
		r.Report(e)
	}
	r.Close()
	// Output:
	// progress: 1/4 sub-requests
	// retry 2/4 GET https://api.example.gov/items?page=3: 503, waiting 1.2s (backoff)
	// retry 1/4 GET https://api.example.gov/items?page=4: 429, waiting 12s (rate limited)
	// hint: api.example.gov accepts an API key; set STEADY_API_KEY to raise your rate limit
	// progress: 4/4 sub-requests, 2 retries
}

func ExampleSlog() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		// Drop the time so the example's output is stable.
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	r := event.Slog(logger)
	event.Emit(r, event.Event{Kind: event.RetryScheduled, Method: "GET",
		URL: "https://api.example.gov/items", Attempt: 1, Status: 503,
		Wait: 1200 * time.Millisecond, Reason: event.WaitBackoff})
	event.Emit(r, event.Event{Kind: event.PageReceived, Done: 1, Items: 100}) // Debug: below Info
	event.Emit(r, event.Event{Kind: event.Stopped, Method: "GET",
		URL: "https://api.example.gov/items", Attempt: 2, ErrClass: "timeout", Reason: "stalled"})
	// Output:
	// level=INFO msg="retry scheduled" method=GET url=https://api.example.gov/items attempt=1 status=503 wait=1.2s reason=backoff
	// level=ERROR msg=stopped method=GET url=https://api.example.gov/items attempt=2 err_class=timeout reason=stalled
}

func ExampleAuto() {
	// A buffer is no terminal, so Auto picks plain lines.
	var buf bytes.Buffer
	r := render.Auto(&buf, render.Options{})
	event.Emit(r, event.Event{Kind: event.Waiting, Host: "api.example.gov",
		Wait: 3 * time.Second, Reason: event.WaitRateLimited})
	r.Close()
	fmt.Print(buf.String())

	quiet := render.Auto(os.Stderr, render.Options{Quiet: true})
	fmt.Println(quiet == render.Discard)
	// Output:
	// waiting api.example.gov: 3s (rate limited)
	// true
}

func ExampleTally() {
	var tally render.Tally
	var buf bytes.Buffer
	r := event.Multi(&tally, render.NewPlain(&buf, render.Options{}))
	for _, e := range []event.Event{
		{Kind: event.RequestStarted},
		{Kind: event.RetryScheduled, Wait: 2 * time.Second, Reason: event.WaitBackoff},
		{Kind: event.RetryScheduled, Wait: 12 * time.Second, Reason: event.WaitRateLimited},
		{Kind: event.PageReceived, Items: 500, Bytes: 1_200_000},
		{Kind: event.RequestFinished, Status: 200},
	} {
		event.Emit(r, e)
	}
	tally.WriteSummary(os.Stdout)
	// Output:
	// requests  1
	// attempts  3
	// retries   2       backoff 1, rate limited 1
	// waited    14s     backoff 2s, rate limited 12s
	// pages     1
	// rows      500
	// bytes     1.2 MB
	// stopped   0
}

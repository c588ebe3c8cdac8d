package event_test

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/steadyhttp/steady/event"
)

const items = "https://api.example.gov/items"

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func TestSlog(t *testing.T) {
	tests := []struct {
		name  string
		e     event.Event
		level slog.Level
		want  string
	}{
		{"retry after backoff is Info",
			event.Event{Kind: event.RetryScheduled, Method: "GET", URL: items, Host: "api.example.gov", Attempt: 1, MaxAttempts: 5, Status: 503, Wait: 1200 * time.Millisecond, Reason: event.WaitBackoff},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=INFO msg="retry scheduled" method=GET url=https://api.example.gov/items host=api.example.gov attempt=1 max_attempts=5 status=503 wait=1.2s reason=backoff`},
		{"rate-limited retry is Warn",
			event.Event{Kind: event.RetryScheduled, Host: "api.example.gov", Attempt: 2, Status: 429, Wait: 12 * time.Second, Reason: event.WaitRateLimited},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=WARN msg="retry scheduled" host=api.example.gov attempt=2 status=429 wait=12s reason="rate limited"`},
		{"stop with a response is Warn",
			event.Event{Kind: event.Stopped, Host: "h", Attempt: 5, Status: 503, Reason: "attempts exhausted"},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=WARN msg=stopped host=h attempt=5 status=503 reason="attempts exhausted"`},
		{"stop without a response is Error",
			event.Event{Kind: event.Stopped, Host: "h", Attempt: 2, ErrClass: "timeout", Err: "read: i/o timeout\nforged=1", Reason: "stalled"},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=ERROR msg=stopped host=h attempt=2 err_class=timeout err="read: i/o timeout\nforged=1" reason=stalled`},
		{"page is Debug",
			event.Event{Kind: event.PageReceived, Done: 3, Items: 100, Bytes: 2048, TotalItems: 1000},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=DEBUG msg="page received" items=100 bytes=2048 done=3 total_items=1000`},
		{"quota keeps a zero remaining",
			event.Event{Kind: event.QuotaSeen, Host: "h", Remaining: 0, Reset: 45 * time.Second},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=DEBUG msg="quota seen" host=h remaining=0 reset=45s`},
		{"a finished request's quota",
			event.Event{Kind: event.RequestFinished, Host: "h", Attempt: 1, Status: 200, Quota: true, Remaining: 0, Reset: 45 * time.Second},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=DEBUG msg="request finished" host=h attempt=1 status=200 remaining=0 reset=45s`},
		{"a finished request without a quota",
			event.Event{Kind: event.RequestFinished, Host: "h", Attempt: 1, Status: 200},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=DEBUG msg="request finished" host=h attempt=1 status=200`},
		{"quota without remaining",
			event.Event{Kind: event.QuotaSeen, Host: "h", Remaining: -1},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=DEBUG msg="quota seen" host=h`},
		{"pacing is Info",
			event.Event{Kind: event.Waiting, Host: "h", Wait: 3 * time.Second, Reason: event.WaitRateLimited},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=INFO msg=waiting host=h wait=3s reason="rate limited"`},
		{"a circuit that opens is Warn",
			event.Event{Kind: event.BreakerChanged, Host: "h", Reason: "open", Wait: 5 * time.Second, Total: 8},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=WARN msg="breaker changed" host=h wait=5s reason=open total=8`},
		{"a limit cut is Info",
			event.Event{Kind: event.BreakerChanged, Host: "h", Reason: "limit", Total: 4},
			slog.LevelDebug,
			`time=2026-11-29T10:00:00.000Z level=INFO msg="breaker changed" host=h reason=limit total=4`},
		{"below the handler's level",
			event.Event{Kind: event.SubrequestDone, Done: 1, Total: 2},
			slog.LevelInfo,
			``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			r := event.Slog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level})))
			tt.e.Time = t0
			r.Report(tt.e)
			want := tt.want
			if want != "" {
				want += "\n"
			}
			if got := buf.String(); got != want {
				t.Errorf("logged\n %q\nwant\n %q", got, want)
			}
		})
	}
}

func TestSlogNilLoggerIsSilent(t *testing.T) {
	if r := event.Slog(nil); r != nil {
		t.Errorf("Slog(nil) = %v, want a nil Reporter", r)
	}
	event.Emit(event.Slog(nil), event.Event{Kind: event.Stopped}) // must not panic
}

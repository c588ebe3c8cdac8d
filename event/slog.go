package event

import (
	"context"
	"log/slog"
	"time"
)

// Slog returns a [Reporter] that logs each event to l, for services that log
// instead of drawing. The message is the event's [Kind]; its fields that
// apply are attributes (method, url, host, attempt, max_attempts, status,
// err_class, err, wait, reason, items, bytes, done, total, total_items,
// remaining, reset), and the record carries the event's time.
//
// Levels follow what a reader should do about an event: a retry is Info,
// Warn when the server rate-limits; a stop is Warn when the last response
// went back to the caller, Error when the request ended without one;
// a circuit that opens is Warn, and any other change of overload control
// Info; pages, sub-requests, quotas and request starts and ends are Debug.
//
// A nil l gives a nil Reporter, which is silent.
func Slog(l *slog.Logger) Reporter {
	if l == nil {
		return nil
	}
	return slogReporter{l}
}

type slogReporter struct{ l *slog.Logger }

func (s slogReporter) Report(e Event) {
	ctx := context.Background()
	level := slogLevel(e)
	h := s.l.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	r := slog.NewRecord(now(e), level, e.Kind.String(), 0)
	r.AddAttrs(slogAttrs(e)...)
	// A handler's error has nowhere to go: Report is on the request path
	// and must not fail it.
	_ = h.Handle(ctx, r)
}

func slogLevel(e Event) slog.Level {
	switch e.Kind {
	case RetryScheduled:
		if e.Reason == WaitRateLimited || e.Status == 429 {
			return slog.LevelWarn
		}
		return slog.LevelInfo
	case Waiting, Parked:
		return slog.LevelInfo
	case BreakerChanged:
		if e.Reason == "open" {
			return slog.LevelWarn
		}
		return slog.LevelInfo
	case Stopped:
		if e.Status != 0 {
			return slog.LevelWarn
		}
		return slog.LevelError
	}
	return slog.LevelDebug
}

// slogAttrs lists the fields of e that are set, in a fixed order.
func slogAttrs(e Event) []slog.Attr {
	var a []slog.Attr
	str := func(k, v string) {
		if v != "" {
			a = append(a, slog.String(k, v))
		}
	}
	num := func(k string, v int64) {
		if v != 0 {
			a = append(a, slog.Int64(k, v))
		}
	}
	str("method", e.Method)
	str("url", e.URL)
	str("host", e.Host)
	num("attempt", int64(e.Attempt))
	num("max_attempts", int64(e.MaxAttempts))
	num("status", int64(e.Status))
	str("err_class", e.ErrClass)
	str("err", e.Err)
	if e.Wait != 0 {
		a = append(a, slog.Duration("wait", e.Wait))
	}
	str("reason", e.Reason)
	num("items", e.Items)
	num("bytes", e.Bytes)
	num("done", int64(e.Done))
	num("total", int64(e.Total))
	num("total_items", e.TotalItems)
	if e.ETA != 0 {
		a = append(a, slog.Duration("eta", e.ETA))
	}
	if e.HasQuota() && e.Remaining >= 0 {
		a = append(a, slog.Int64("remaining", e.Remaining))
	}
	if e.Reset != 0 {
		a = append(a, slog.Duration("reset", e.Reset))
	}
	return a
}

// now is the time an event happened: its own stamp, else the clock.
func now(e Event) time.Time {
	if e.Time.IsZero() {
		return time.Now()
	}
	return e.Time
}

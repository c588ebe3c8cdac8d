package simulate

import (
	"fmt"
	"io"
	"math"
	"time"
)

// errWriter keeps the first write error, so a table is written with plain
// Fprintf calls and checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func nameWidth[T any](items []T, name func(T) string) int {
	n := len("policy")
	for _, it := range items {
		n = max(n, len(name(it)))
	}
	return n
}

// WriteContentionTable writes rows as a fixed-width text table, one line a
// row, in the order given.
func WriteContentionTable(w io.Writer, rows []ContentionRow) error {
	ew := &errWriter{w: w}
	pw := nameWidth(rows, func(r ContentionRow) string { return r.Policy })
	ew.printf("%7s  %-*s  %10s  %12s  %14s\n", "clients", pw, "policy", "calls", "calls/client", "completion (s)")
	for _, r := range rows {
		ew.printf("%7d  %-*s  %10.1f  %12.2f  %14.3f", r.Clients, pw, r.Policy, r.Calls, r.CallsPerClient(), r.Completion.Seconds())
		if r.Unfinished > 0 {
			ew.printf("  (%d of %d trials cut off)", r.Unfinished, r.Trials)
		}
		ew.printf("\n")
	}
	return ew.err
}

// WriteOutageTable writes one line per policy of res as a fixed-width text
// table: amplification while down, time to recover, the share of requests
// that succeeded (issued after the return, and overall), the peak load
// after the return as a multiple of capacity, and why requests stopped
// ("other": a server wait or a pacing hold over MaxRetryAfter, or a refusal
// of overload control).
func WriteOutageTable(w io.Writer, res OutageResult) error {
	ew := &errWriter{w: w}
	pw := nameWidth(res.Runs, func(r OutageRun) string { return r.Policy })
	ew.printf("%-*s  %13s  %8s  %10s  %10s  %9s  %10s  %10s  %6s\n", pw, "policy",
		"amplification", "recovery", "ok after", "ok overall", "peak load", "exhausted", "budget", "other")
	for _, r := range res.Runs {
		recovery := "never"
		if r.Recovered {
			recovery = fmt.Sprintf("%d s", int64(r.Recovery/time.Second))
		}
		ew.printf("%-*s  %12.3fx  %8s  %9.2f%%  %9.2f%%  %8.2fx  %10d  %10d  %6d\n", pw, r.Policy,
			r.Amplification(), recovery, percent(r.SuccessAfter()), percent(r.SuccessOverall()),
			r.Peak, r.Stops.Exhausted, r.Stops.Budget, r.Stops.RetryAfter+r.Stops.RateLimited+r.Stops.Overload)
	}
	return ew.err
}

// WriteOverloadTable writes one line per policy of res for the overload
// scenarios: the attempts that reached the service while it was down, as a
// multiple of those of the first policy (no retry), the time to recover,
// the share of requests that succeeded after the return and overall, the
// requests overload control refused, and how often circuits opened.
func WriteOverloadTable(w io.Writer, res OutageResult) error {
	ew := &errWriter{w: w}
	pw := nameWidth(res.Runs, func(r OutageRun) string { return r.Policy })
	base := OutageRun{}
	if len(res.Runs) > 0 {
		base = res.Runs[0]
	}
	ew.printf("%-*s  %13s  %14s  %8s  %10s  %10s  %10s  %9s\n", pw, "policy",
		"sent while down", "vs "+clip(base.Policy, 11), "recovery", "ok after", "ok overall", "refused", "opens")
	for _, r := range res.Runs {
		recovery := "never"
		if r.Recovered {
			recovery = fmt.Sprintf("%d s", int64(r.Recovery/time.Second))
		}
		ew.printf("%-*s  %15d  %13.3fx  %8s  %9.2f%%  %9.2f%%  %10d  %9d\n", pw, r.Policy,
			r.DownAttempts, r.DownRatio(base), recovery, percent(r.SuccessAfter()), percent(r.SuccessOverall()),
			r.Stops.Overload, r.Opens)
	}
	return ew.err
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// percent rounds down to hundredths of a percent, so a share just under
// 100% never prints as 100.00%.
func percent(share float64) float64 { return math.Floor(share*10000) / 100 }

// WriteLimiterTable writes one line per run of the headerless-429
// scenario: when the last part ended, against the limiter's floor, the
// 429s drawn, the attempts sent and the parts that gave up.
func WriteLimiterTable(w io.Writer, runs []LimiterRun) error {
	ew := &errWriter{w: w}
	pw := nameWidth(runs, func(r LimiterRun) string { return r.Policy })
	ew.printf("%-*s  %9s  %9s  %9s  %6s  %8s  %6s\n", pw, "policy", "done (s)", "floor (s)", "vs floor", "429s", "attempts", "failed")
	for _, r := range runs {
		ew.printf("%-*s  %9.1f  %9.1f  %8.3fx  %6d  %8d  %6d\n", pw, r.Policy,
			r.Done.Seconds(), r.Floor.Seconds(), r.OverFloor(), r.Refused, r.Attempts, r.Failed)
	}
	return ew.err
}

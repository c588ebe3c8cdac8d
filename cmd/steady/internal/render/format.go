package render

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/retry"
)

// maxURLBytes bounds a URL inside one rendered line. A chunked query's URL
// can be several kilobytes; its head (scheme, host, path, first parameters)
// is what a reader greps for.
const maxURLBytes = 120

// fmtDuration renders a wait the way a person reads it: milliseconds below
// a second, tenths of a second below a minute, whole seconds above.
func fmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return "1ms"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// fmtBytes renders a byte count in decimal units with at most one decimal.
func fmtBytes(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := float64(n)
	units := []string{"kB", "MB", "GB", "TB", "PB", "EB"}
	var unit string
	for _, unit = range units {
		v /= 1000
		if v < 1000 {
			break
		}
	}
	return fmtAmount(v) + " " + unit
}

// FormatBytes renders a byte count as every line of the command does, in
// decimal units: "999 B", "12 MB", "1.5 GB".
func FormatBytes(n int64) string { return fmtBytes(n) }

// fmtAmount shows one decimal below ten and none above, so figures stay
// short and stable in width.
func fmtAmount(v float64) string {
	if v < 9.95 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// clean makes text from the network safe to put on one line: control
// characters (newlines, escape sequences), Unicode line and paragraph
// separators and bidirectional overrides become '?', so a server cannot
// forge extra log lines, move the terminal cursor or reorder what is shown.
func clean(s string) string {
	if printableASCII(s) || strings.IndexFunc(s, unsafeRune) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) || r == utf8.RuneError {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// printableASCII is clean's fast path: URLs and Go error texts are
// nearly always plain ASCII.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Bidi_Control)
}

// shortURL cleans u and cuts it to maxURLBytes at a rune boundary.
func shortURL(u string) string {
	u = clean(u)
	if len(u) <= maxURLBytes {
		return u
	}
	cut := maxURLBytes
	for cut > 0 && !utf8.RuneStart(u[cut]) {
		cut--
	}
	return u[:cut] + "..."
}

// target names what a request event is about: "GET https://...", falling
// back to the host when the URL is missing.
func target(e event.Event) string {
	where := shortURL(e.URL)
	if where == "" {
		where = clean(e.Host)
	}
	if e.Method == "" {
		return where
	}
	if where == "" {
		return clean(e.Method)
	}
	return clean(e.Method) + " " + where
}

// failure is the short cause of a failed attempt: its status, else its
// error class, else "".
func failure(e event.Event) string {
	if e.Status != 0 {
		return strconv.Itoa(e.Status)
	}
	return clean(e.ErrClass)
}

// plural returns "1 attempt" or "2 attempts".
func plural[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(int64(n), 10) + " " + many
}

// waitPhrase says why and for how long requests are held, as the status
// lines of the bars show it: left is what remains of the wait, so that a
// redrawn line counts down instead of repeating the planned length.
func waitPhrase(e event.Event, left time.Duration) string {
	d := fmtDuration(left)
	if e.Reason == event.WaitServerHint && e.Status == statusTooManyRequests {
		// A 429's Retry-After is a server hint to the retry package; to
		// the reader it is being rate limited.
		return "rate limited: waiting " + d + " as the server asked"
	}
	switch e.Reason {
	case event.WaitRateLimited:
		if e.Status == statusTooManyRequests {
			return "rate limited: waiting " + d + " as the server asked"
		}
		return "quota: waiting " + d + " for its window to reset"
	case event.WaitOverload:
		return "overload: waiting " + d + " as the host's breaker holds"
	case event.WaitServerHint:
		return "server hint: waiting " + d + " as the server asked"
	case event.WaitBackoff:
		if f := failure(e); f != "" {
			return "backoff: waiting " + d + " after " + f
		}
		return "backoff: waiting " + d
	case "":
		return "waiting " + d
	}
	return clean(e.Reason) + ": waiting " + d
}

// interrupted reports whether e is a request stopped because the caller's
// context was cancelled: the user's own Ctrl-C, which the command says
// once when it ends, not once per request in flight.
func interrupted(e event.Event) bool {
	return e.Kind == event.Stopped && errors.Is(e.Stop, context.Canceled)
}

// flagWords restates the retry package's stop reasons in the command's
// words: the flag that sets a bound, not the library's field.
var flagWords = strings.NewReplacer(
	retry.ErrRetryAfter.Error(), "server asked to wait longer than --max-retry-after",
	retry.ErrRateLimited.Error(), "rate limited until a reset beyond --max-retry-after",
)

// InFlagWords restates the retry package's stop reasons in s in the
// command's words, as every line of the renderers does.
func InFlagWords(s string) string { return flagWords.Replace(s) }

// stopReason is a stop's reason as shown: cleaned, in flag words, "gave
// up" when the event has none.
func stopReason(e event.Event) string {
	reason := flagWords.Replace(clean(e.Reason))
	if reason == "" {
		reason = "gave up"
	}
	return reason
}

// retryLine renders a RetryScheduled event:
//
//	retry 2/4 GET https://api.example.gov/items?page=3: 503, waiting 1.2s (backoff)
//
// The number is the retry's (retry n follows attempt n); the total is the
// retries the policy allows, MaxAttempts-1.
func retryLine(e event.Event) string {
	var b strings.Builder
	b.WriteString("retry")
	if e.Attempt > 0 {
		b.WriteString(" " + strconv.Itoa(e.Attempt))
		if e.MaxAttempts > 1 {
			b.WriteString("/" + strconv.Itoa(e.MaxAttempts-1))
		}
	}
	if t := target(e); t != "" {
		b.WriteString(" " + t)
	}
	f := failure(e)
	if f == "" {
		f = "failed"
	}
	b.WriteString(": " + f + ", waiting " + fmtDuration(e.Wait))
	if e.Reason != "" {
		b.WriteString(" (" + clean(e.Reason) + ")")
	}
	return b.String()
}

// waitingLine renders a Waiting event:
//
//	waiting GET https://api.example.gov/items: 3s (rate limited)
func waitingLine(e event.Event) string {
	s := "waiting"
	if t := target(e); t != "" {
		s += " " + t
	}
	s += ": " + fmtDuration(e.Wait)
	if e.Reason != "" {
		s += " (" + clean(e.Reason) + ")"
	}
	return s
}

// stoppedLine renders a Stopped event:
//
//	stopped GET https://api.example.gov/items: attempts exhausted after 5 attempts (503)
func stoppedLine(e event.Event) string {
	s := "stopped"
	if t := target(e); t != "" {
		s += " " + t
	}
	s += ": " + stopReason(e)
	if e.Attempt > 0 {
		s += " after " + plural(e.Attempt, "attempt", "attempts")
	}
	if f := stopDetail(e); f != "" {
		s += " (" + f + ")"
	}
	return s
}

// stopDetail is the last failure of a stopped request and, when the server
// named a wait too long to serve, that wait: "429, retry-after 2h0m0s".
// The caller decides whether to wait it out, so it must be visible.
func stopDetail(e event.Event) string {
	f := failure(e)
	if e.Wait <= 0 {
		return f
	}
	if f != "" {
		f += ", "
	}
	return f + "retry-after " + fmtDuration(e.Wait)
}

// quotaPhrase renders what a QuotaSeen event says: "3 left, resets in 45s".
func quotaPhrase(e event.Event) string {
	s := strconv.FormatInt(e.Remaining, 10) + " left"
	if e.Reset > 0 {
		s += ", resets in " + fmtDuration(e.Reset)
	}
	return s
}

// quotaLine renders a low quota:
//
//	quota low api.example.gov: 3 left, resets in 45s
func quotaLine(e event.Event) string {
	host := hostOf(e)
	if host == "" {
		return "quota low: " + quotaPhrase(e)
	}
	return "quota low " + host + ": " + quotaPhrase(e)
}

// resumedLine renders a Resumed event as where the work picks up:
//
//	resuming at row 2001 (page 21)
func resumedLine(e event.Event) string {
	return "resuming at row " + strconv.FormatInt(max(e.Items, 0)+1, 10) + " (page " + strconv.Itoa(max(e.Done, 0)+1) + ")"
}

// withSuppressed notes on a line how many like it were held back.
func withSuppressed(line string, n int) string {
	if n == 0 {
		return line
	}
	return line + " [+" + strconv.Itoa(n) + " similar]"
}

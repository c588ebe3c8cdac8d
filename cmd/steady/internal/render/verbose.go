package render

import (
	"io"
	"strconv"
	"sync"

	"github.com/steadyhttp/steady/event"
)

// verboseLine is the attempt line of e when opt asks for them.
func verboseLine(opt Options, e event.Event) (string, bool) {
	if !opt.Verbose {
		return "", false
	}
	return AttemptLine(e)
}

// AttemptLine renders what one attempt came to, for a verbose log, and
// reports whether e is such an event (a finished, re-sent or stopped
// attempt, or a hold before one):
//
//	attempt 1/5 GET https://api.example.gov/items?page=3: 503, retry in 1.2s (backoff)
//	attempt 2/5 GET https://api.example.gov/items?page=3: 200
//	attempt 5/5 GET https://api.example.gov/items?page=3: 503, stopped (attempts exhausted)
//	hold GET https://api.example.gov/items: 3s (rate limited)
//	breaker open: api.example.gov; probing in 5s
//
// Every change of a host's breaker is such a line too, limit changes
// included. Every piece of server text is cleaned as on every other line.
func AttemptLine(e event.Event) (string, bool) {
	if e.Kind == event.BreakerChanged {
		return breakerLine(e), true
	}
	var head string
	if e.Kind == event.Waiting {
		head = "hold"
	} else {
		head = "attempt"
		if e.Attempt > 0 {
			head += " " + strconv.Itoa(e.Attempt)
			if e.MaxAttempts > 0 {
				head += "/" + strconv.Itoa(e.MaxAttempts)
			}
		}
	}
	if t := target(e); t != "" {
		head += " " + t
	}
	f := failure(e)
	switch e.Kind {
	case event.RequestFinished:
		return head + ": " + f, true
	case event.RetryScheduled:
		if f == "" {
			f = "failed"
		}
		return head + ": " + f + ", retry in " + fmtDuration(e.Wait) + reasonSuffix(e.Reason), true
	case event.Stopped:
		if d := stopDetail(e); d != "" {
			head += ": " + d + ","
		} else {
			head += ":"
		}
		return head + " stopped (" + stopReason(e) + ")", true
	case event.Waiting:
		return head + ": " + fmtDuration(e.Wait) + reasonSuffix(e.Reason), true
	}
	return "", false
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + clean(r) + ")"
}

// attemptLog writes the attempt lines and nothing else: quiet and verbose.
type attemptLog struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
	err    error
}

func (a *attemptLog) Report(e event.Event) {
	line, ok := AttemptLine(e)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed && a.err == nil {
		_, a.err = io.WriteString(a.w, line+"\n")
	}
}

func (a *attemptLog) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	return a.err
}

package render

import (
	"io"
	"net/http"
	"strconv"
	"strings"
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
	if line, ok := continuationLine(e); ok {
		return line, true
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

// continuationLine renders the events of a body continued with a Range
// request, which the transport sends as a request of its own, so that its
// attempt numbers would start again at 1 for every continuation:
//
//	resume GET https://data.example.gov/dump.tar: eof at byte 1048576, continuing in 0s
//	continued GET https://data.example.gov/dump.tar: 206
func continuationLine(e event.Event) (string, bool) {
	switch {
	case e.Kind == event.RetryScheduled && strings.HasPrefix(e.Reason, event.WaitResume+" at byte "):
		f := failure(e)
		if f == "" {
			f = "broken"
		}
		return "resume " + target(e) + ": " + f + " at byte " + strconv.FormatInt(e.Bytes, 10) +
			", continuing in " + fmtDuration(e.Wait), true
	case e.Kind == event.RequestFinished && e.Status == http.StatusPartialContent:
		return "continued " + target(e) + ": 206", true
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

package render

import (
	"strconv"

	"github.com/steadyhttp/steady/event"
)

// breakerLimit is the Reason of a BreakerChanged event that moves only the
// concurrency limit or the spacing, not the circuit.
const breakerLimit = "limit"

// breakerLine renders a BreakerChanged event, the host cleaned like every
// other piece of network text:
//
//	breaker open: api.example.gov; probing in 5s
//	breaker half-open: api.example.gov; probing
//	breaker closed: api.example.gov
//	breaker limit: api.example.gov; 4 in flight, 250ms between sends
//
// The event carries no failure counts, so the line names none.
func breakerLine(e event.Event) string {
	s := "breaker " + clean(e.Reason) + ":"
	if h := clean(e.Host); h != "" {
		s += " " + h
	}
	switch e.Reason {
	case "open":
		if e.Wait > 0 {
			s += "; probing in " + fmtDuration(e.Wait)
		}
	case "half-open":
		s += "; probing"
	case breakerLimit:
		s += "; " + limitPhrase(e)
	}
	return s
}

// limitPhrase says what a limit change leaves: the concurrency limit (Total)
// and the spacing (Wait), or that neither holds any longer.
func limitPhrase(e event.Event) string {
	var s string
	if e.Total > 0 {
		s = strconv.Itoa(e.Total) + " in flight"
	}
	if e.Wait > 0 {
		if s != "" {
			s += ", "
		}
		s += fmtDuration(e.Wait) + " between sends"
	}
	if s == "" {
		return "no limit"
	}
	return s
}

// breakerNotice reports whether a BreakerChanged event gets a line now, and
// how many were held back before it. Circuit changes always do: there are
// few, and each changes what the reader sees. Limit changes move with every
// 429 and every run of successes, so they are held to one per host and
// notice interval like retry lines.
func breakerNotice(n *notices, e event.Event) (ok bool, held int) {
	if e.Reason != breakerLimit {
		return true, 0
	}
	return n.admit(noticeKey{e.Kind, hostOf(e)}, now(e))
}

package render

import (
	"strconv"
	"strings"

	"github.com/steadyhttp/steady/event"
)

// breakerLimit is the Reason of a BreakerChanged event that moves only the
// concurrency limit or the learned quota, not the circuit.
const breakerLimit = "limit"

// breakerLine renders a BreakerChanged event, the host cleaned like every
// other piece of network text, saying why the state changed:
//
//	breaker open: api.example.gov; 12 of 20 calls failed, retry in 5s
//	breaker open: api.example.gov; the probe failed, retry in 10s
//	breaker half-open: api.example.gov; probing
//	breaker closed: api.example.gov; the probe passed
//	breaker limit: api.example.gov; 4 in flight, 50 per 5s learned
func breakerLine(e event.Event) string {
	s := "breaker " + clean(e.Reason) + ":"
	if h := clean(e.Host); h != "" {
		s += " " + h
	}
	switch e.Reason {
	case "open":
		s += "; " + openPhrase(e)
	case "half-open":
		s += "; probing"
	case "closed":
		s += "; the probe passed"
	case breakerLimit:
		s += "; " + limitPhrase(e)
	}
	return s
}

// openPhrase says why a circuit opened (Done of Total first attempts
// failed, or the probe did when both are 0) and when it is tried again.
func openPhrase(e event.Event) string {
	s := "the probe failed"
	if e.Total > 0 {
		s = strconv.Itoa(e.Done) + " of " + strconv.Itoa(e.Total) + " calls failed"
	}
	if e.Wait > 0 {
		s += ", retry in " + fmtDuration(e.Wait)
	}
	return s
}

// limitPhrase says what a limit change leaves: the concurrency limit (Total)
// and the quota learned from headerless 429s (Done per Wait), or that
// neither holds any longer.
func limitPhrase(e event.Event) string {
	var parts []string
	if e.Total > 0 {
		parts = append(parts, strconv.Itoa(e.Total)+" in flight")
	}
	if e.Done > 0 && e.Wait > 0 {
		parts = append(parts, strconv.Itoa(e.Done)+" per "+fmtDuration(e.Wait)+" learned")
	}
	if len(parts) == 0 {
		return "no limit"
	}
	return strings.Join(parts, ", ")
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

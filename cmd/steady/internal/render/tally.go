package render

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/steadyhttp/steady/event"
)

// A Tally is a [Reporter] that counts what happened, for a summary at the
// end of a run (the demo chains it with a renderer through [Multi]). Its
// zero value is ready to use, and it is safe for concurrent use.
type Tally struct {
	mu sync.Mutex
	c  Counts
}

// Counts are a [Tally]'s figures.
type Counts struct {
	Requests int // logical requests started (RequestStarted)
	Finished int // requests that handed a response back (RequestFinished)

	Retries         int            // retries scheduled
	RetriesByReason map[string]int // retries per wait reason

	// Waited is the sum of planned waits, of retries and of pacing (Waiting
	// events), per reason in WaitedByReason. A wait cut short by
	// cancellation counts in full: the figure says what the servers and
	// the policy asked for.
	Waited         time.Duration
	WaitedByReason map[string]time.Duration

	Pages int   // pages received
	Items int64 // items on those pages
	Bytes int64 // bytes of those pages

	Subrequests int // sub-requests finished

	Stops         int            // requests that stopped retrying without success
	StopsByReason map[string]int // stops per reason
}

// Attempts is the number of attempts sent or scheduled: each request's first
// attempt plus its retries. A retry whose wait was cut short by
// cancellation is counted, since the events cannot tell it apart.
func (c Counts) Attempts() int { return c.Requests + c.Retries }

// otherReason files events that carry no reason.
const otherReason = "other"

// Report counts e.
func (t *Tally) Report(e event.Event) {
	reason := e.Reason
	switch {
	case reason == "":
		reason = otherReason
	case strings.HasPrefix(reason, event.WaitResume+" at byte "):
		reason = event.WaitResume // one entry, not one per offset
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &t.c
	switch e.Kind {
	case event.RequestStarted:
		c.Requests++
	case event.RequestFinished:
		c.Finished++
	case event.RetryScheduled:
		c.Retries++
		c.RetriesByReason = bump(c.RetriesByReason, reason, 1)
		c.Waited += max(e.Wait, 0)
		c.WaitedByReason = bump(c.WaitedByReason, reason, max(e.Wait, 0))
	case event.Waiting:
		c.Waited += max(e.Wait, 0)
		c.WaitedByReason = bump(c.WaitedByReason, reason, max(e.Wait, 0))
	case event.PageReceived:
		c.Pages++
		c.Items += max(e.Items, 0)
		c.Bytes += max(e.Bytes, 0)
	case event.SubrequestDone:
		c.Subrequests++
	case event.Stopped:
		c.Stops++
		c.StopsByReason = bump(c.StopsByReason, reason, 1)
	}
}

func bump[V int | time.Duration](m map[string]V, k string, by V) map[string]V {
	if m == nil {
		m = make(map[string]V)
	}
	m[k] += by
	return m
}

// Counts returns a copy of the figures so far.
func (t *Tally) Counts() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.c
	c.RetriesByReason = maps.Clone(c.RetriesByReason)
	c.WaitedByReason = maps.Clone(c.WaitedByReason)
	c.StopsByReason = maps.Clone(c.StopsByReason)
	return c
}

// WriteSummary writes the figures as an aligned table, one figure a line,
// with the breakdown by reason (sorted by name) after it:
//
//	requests  12
//	attempts  17
//	retries   5       backoff 3, rate limited 2
//	waited    14.2s   backoff 2.2s, rate limited 12s
//	pages     40
//	rows      3400
//	bytes     1.2 MB
//	stopped   0
//
// The sub-requests line appears only when there were any.
func (t *Tally) WriteSummary(w io.Writer) error {
	c := t.Counts()
	type row struct{ name, value, detail string }
	itoa := strconv.Itoa
	rows := []row{
		{"requests", itoa(c.Requests), ""},
		{"attempts", itoa(c.Attempts()), ""},
		{"retries", itoa(c.Retries), breakdown(c.RetriesByReason, itoa)},
		{"waited", fmtDuration(c.Waited), breakdown(c.WaitedByReason, fmtDuration)},
	}
	if c.Subrequests > 0 {
		rows = append(rows, row{"sub-requests", itoa(c.Subrequests), ""})
	}
	rows = append(rows,
		row{"pages", itoa(c.Pages), ""},
		row{"rows", strconv.FormatInt(c.Items, 10), ""},
		row{"bytes", fmtBytes(c.Bytes), ""},
		row{"stopped", itoa(c.Stops), breakdown(c.StopsByReason, itoa)},
	)
	var nameW, valueW int
	for _, r := range rows {
		nameW, valueW = max(nameW, len(r.name)), max(valueW, len(r.value))
	}
	var b strings.Builder
	for _, r := range rows {
		// Trimmed, so a row without a breakdown has no trailing blanks.
		line := fmt.Sprintf("%-*s  %-*s  %s", nameW, r.name, valueW, r.value, r.detail)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// breakdown renders "backoff 3, rate limited 2", sorted by reason.
func breakdown[V any](m map[string]V, format func(V) string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, clean(k)+" "+format(m[k]))
	}
	return strings.Join(parts, ", ")
}

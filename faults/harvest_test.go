package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	steady "github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/steadytest"
)

// harvest is the outcome of one walk of the collection, with the evidence
// the matrix needs: which rows arrived, how often, and what it cost.
type harvest struct {
	total int // rows in the collection

	rows    int  // distinct, correct rows received
	dups    int  // rows received more than once
	bad     int  // items that are not a row of the collection, byte for byte
	prefix  bool // the rows received are exactly ids 1..rows
	err     error
	sum     paginate.Summary
	sent    int // attempts sent or scheduled, from the retry layer's events
	elapsed time.Duration
	end     time.Time // when the walk ended
}

// attempts is the number of attempts the walk sent, from the tally of the
// retry layer's events.
func (h harvest) attempts() int { return h.sent }

// attemptCount counts the retry layer's attempts from its events: each
// request's first attempt plus every re-send it scheduled.
type attemptCount struct{ n atomic.Int64 }

func (a *attemptCount) Report(e event.Event) {
	if e.Kind == event.RequestStarted || e.Kind == event.RetryScheduled {
		a.n.Add(1)
	}
}

// summaryAttempts counts the same from the walk's own summary: a request
// per page received, one more for the page that failed, plus the re-sends.
func (h harvest) summaryAttempts() int {
	n := h.sum.Pages + int(h.sum.Retries)
	if h.err != nil {
		n++
	}
	return n
}

// walk harvests the collection at base through c, pageSize rows a page,
// calling onPage after each page (for faults that start mid-walk). The
// items are kept during the walk and checked after it, so the elapsed time
// is the client's and the proxy's alone. Every item is compared with the
// row the server computes for its id, so a truncated or spliced body could
// not pass as data.
func walk(ctx context.Context, c *steady.Client, tally *attemptCount, total, pageSize int, onPage func(n int)) harvest {
	h := harvest{total: total}
	opt := paginate.Options{}
	if onPage != nil {
		// A fault set after page n must strike page n+1: nothing is
		// asked for before the page is handed over.
		opt.Concurrency = 1
	}
	w, err := c.Walk(steadytest.ItemsPath, url.Values{"limit": {strconv.Itoa(pageSize)}}, opt)
	if err != nil {
		h.err = err
		return h
	}
	var items []json.RawMessage
	start := time.Now()
	for page, err := range w.All(ctx) {
		if err != nil {
			h.err = err
			break
		}
		for _, it := range page.Items.All() {
			items = append(items, it)
		}
		if onPage != nil {
			onPage(page.Number)
		}
	}
	h.end = time.Now()
	h.elapsed = h.end.Sub(start)
	h.sum = w.Summary()
	h.sent = int(tally.n.Load())

	seen := make([]bool, total+1)
	for _, item := range items {
		id, ok := rowID(item)
		switch {
		case !ok || id < 1 || id > total:
			h.bad++
		case seen[id]:
			h.dups++
		default:
			seen[id] = true
			h.rows++
		}
	}
	h.prefix = true
	for id := 1; id <= h.rows; id++ {
		if !seen[id] {
			h.prefix = false
			break
		}
	}
	return h
}

// rowID returns the id of item when item is exactly the JSON of that row.
func rowID(item json.RawMessage) (int, bool) {
	var r struct {
		ID int `json:"id"`
	}
	if err := json.Unmarshal(item, &r); err != nil {
		return 0, false
	}
	want, err := json.Marshal(steadytest.RowFor(r.ID))
	if err != nil || !bytes.Equal(item, want) {
		return 0, false
	}
	return r.ID, true
}

// completeProblems lists what is wrong with a harvest that should be
// complete.
func (h harvest) completeProblems() []string {
	var p []string
	if h.err != nil {
		p = append(p, fmt.Sprintf("walk failed: %v", h.err))
	}
	if !h.sum.Complete {
		p = append(p, "summary says the walk is not complete")
	}
	if h.rows != h.total || !h.prefix {
		p = append(p, fmt.Sprintf("%d of %d rows arrived (ids 1..%d contiguous: %v)", h.rows, h.total, h.rows, h.prefix))
	}
	return append(p, h.integrityProblems()...)
}

// integrityProblems lists what is wrong with the rows of any harvest,
// complete or not: a duplicate, a foreign or corrupt item, a gap.
func (h harvest) integrityProblems() []string {
	var p []string
	if h.dups > 0 {
		p = append(p, fmt.Sprintf("%d rows arrived twice", h.dups))
	}
	if h.bad > 0 {
		p = append(p, fmt.Sprintf("%d items are not rows of the collection", h.bad))
	}
	if !h.prefix {
		p = append(p, fmt.Sprintf("the %d rows received are not ids 1..%d", h.rows, h.rows))
	}
	if int(h.sum.Items) != h.rows+h.dups+h.bad {
		p = append(p, fmt.Sprintf("summary counts %d items, the walk yielded %d", h.sum.Items, h.rows+h.dups+h.bad))
	}
	if a, b := h.attempts(), h.summaryAttempts(); a != b {
		p = append(p, fmt.Sprintf("events count %d attempts, the summary %d", a, b))
	}
	return p
}

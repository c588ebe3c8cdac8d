package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/paginate"
)

// autoPages is the walk's pages, with --pages auto settled on the first
// page the walk fetches (ADR 0328). paginate.Auto walks a Link header or
// JSON links as it always did; when it finds neither, paginate.Detect reads
// the same page, without a request: a provably single page ends the walk
// as before; another style it proves replaces Auto, and its walk starts
// over at the same URL, so that page is fetched again and the new walk's
// pages are the ones yielded (*walk is the new walk from then on). When
// nothing proves a style or a single page, the walk fails after that page
// (exit 1) instead of publishing a file of the first page alone. A resume
// detects again on the page it starts from, so it settles the same way.
func (j *job) autoPages(walk **paginate.Walk, opt paginate.Options, st *harvestState) func(context.Context) iter.Seq2[*paginate.Page, error] {
	first, start := *walk, j.start
	if j.pages != "auto" {
		if isRangeStyle(j.next) && j.resume && st.Rows > 0 {
			ropt, skip := rangeResumeOptions(opt, st)
			w, err := j.client.Walk(start, nil, ropt)
			if err != nil {
				return func(context.Context) iter.Seq2[*paginate.Page, error] { return failed(err) }
			}
			*walk = w
			return func(ctx context.Context) iter.Seq2[*paginate.Page, error] { return skipRows(w.All(ctx), skip) }
		}
		return first.All
	}
	var switched *paginate.Detection
	if inner := j.detected; inner != nil || j.say != nil {
		j.detected = func(d paginate.Detected) {
			// Called after the first page yielded, which the switch
			// happened before.
			switch {
			case switched != nil && j.say != nil:
				fmt.Fprintln(j.say, detectionLine(*switched, opt.Items))
			case switched == nil && inner != nil:
				inner(d)
			}
		}
	}
	hold, _ := opt.Reporter.(*firstPageHold)
	return func(ctx context.Context) iter.Seq2[*paginate.Page, error] {
		return func(yield func(*paginate.Page, error) bool) {
			var d paginate.Detection
			defer hold.release(true)
			for p, err := range first.All(ctx) {
				if notJSONFirst(err) {
					// An XML listing, say: the page is fetched again as
					// any body, for Detect to read.
					p, err = j.probe(ctx, opt)
				}
				if err != nil || p.Number > 1 || first.Summary().Detected.Next != "" {
					hold.release(true)
					if !yield(p, err) {
						return
					}
					continue
				}
				var derr error
				d, derr = paginate.Detect(p)
				if derr != nil {
					var pe *paginate.Error
					if errors.As(derr, &pe) && errors.Is(derr, paginate.ErrUndetected) {
						derr = fmt.Errorf("--pages auto: %s, and nothing proves it is the only page (%s with --pages)", pe.Detail, pe.Hint)
					}
					yield(nil, derr)
					return
				}
				if d.Single || d.Spelling == "link" || d.Spelling == "json-links" {
					d = paginate.Detection{}
					hold.release(true)
					if !yield(p, nil) {
						return
					}
					continue
				}
				break // the style is another: walk it from the start
			}
			if d.Next == nil {
				return
			}
			// The walk of that style fetches the first page again and
			// reports it itself.
			hold.release(false)
			next, skip := opt, int64(0)
			if hold != nil {
				next.Reporter = hold.r
			}
			next.Next = d.Next
			next.Concurrency = 0 // auto settles on one style only after a page: it keeps to one page at a time
			if isXMLStyle(d.Next) {
				next.Items, j.xmlFound = "", true
			}
			if isRangeStyle(d.Next) && j.resume && st.Rows > 0 {
				next, skip = rangeResumeOptions(next, st)
			}
			w, err := j.client.Walk(start, nil, next)
			if err != nil {
				yield(nil, err)
				return
			}
			switched, *walk = &d, w
			for p, err := range skipRows(w.All(ctx), skip) {
				if !yield(p, err) {
					return
				}
			}
		}
	}
}

// detectionLine says what --pages auto proved, as the flags that make it
// explicit.
func detectionLine(d paginate.Detection, items string) string {
	line := "detected: pages by --pages " + d.Spelling
	if items == paginate.FindItems && !isXMLStyle(d.Next) {
		line += fmt.Sprintf(" --items %q", d.Items)
	}
	if d.Guessed {
		line += " (a parameter name comes from a convention, not the URL: check it)"
	}
	return line
}

func isRangeStyle(n paginate.Next) bool {
	return strings.HasPrefix(paginate.Spelling(n), "range")
}

// rangeResumeOptions are the options of a resumed Range walk, and the rows
// to skip of its first pages. The walk starts where the saved Range header
// of the next page says (ADR 0351). A state without one, from a version
// before it, walks from the first row again, with MaxRows counted from
// there, and skipRows drops the st.Rows rows the file holds (ADR 0329).
func rangeResumeOptions(opt paginate.Options, st *harvestState) (paginate.Options, int64) {
	if st.NextRange != "" {
		opt.Range = st.NextRange
		return opt, 0
	}
	if opt.MaxRows > 0 {
		opt.MaxRows += int(st.Rows)
	}
	opt.ItemsBefore = 0 // the walk counts the saved rows itself
	return opt, st.Rows
}

// skipRows yields seq's pages without their first n items; pages left
// empty are not yielded.
func skipRows(seq iter.Seq2[*paginate.Page, error], n int64) iter.Seq2[*paginate.Page, error] {
	return func(yield func(*paginate.Page, error) bool) {
		for p, err := range seq {
			if err == nil && n > 0 {
				k := min(n, int64(p.Items.Len()))
				n -= k
				if int(k) == p.Items.Len() && p.Next != nil {
					continue
				}
				p.Items = p.Items.Slice(int(k), p.Items.Len())
			}
			if !yield(p, err) {
				return
			}
		}
	}
}

func failed(err error) iter.Seq2[*paginate.Page, error] {
	return func(yield func(*paginate.Page, error) bool) { yield(nil, err) }
}

// pagesAtOnce is the walk's Options.Concurrency: --concurrent for an
// explicit computed style, one page at a time otherwise. Each page's
// retry.Outcome is its own (see pageTransport).
func (j *job) pagesAtOnce() int {
	switch name, _, _ := strings.Cut(paginate.Spelling(j.next), ":"); name {
	case "offset", "page", "range":
		if j.concurrency > 1 {
			return j.concurrency
		}
	}
	return 0
}

// notJSONFirst reports whether err is a first page that is not JSON, which
// the link walk --pages auto starts with cannot read, and Detect may.
func notJSONFirst(err error) bool {
	var pe *paginate.Error
	return errors.As(err, &pe) && pe.Page == 1 && errors.Is(err, paginate.ErrNotJSON)
}

// probe fetches the walk's first page as any body, once.
func (j *job) probe(ctx context.Context, opt paginate.Options) (*paginate.Page, error) {
	w, err := j.client.Walk(j.start, nil, paginate.Options{Items: paginate.NoItems, MaxPages: 1,
		AllowedHosts: opt.AllowedHosts, Reporter: opt.Reporter})
	if err != nil {
		return nil, err
	}
	for p, err := range w.All(ctx) {
		return p, err
	}
	return nil, errors.New("the first page could not be fetched again")
}

// firstPageHold passes events on to r, except the pages reported while
// --pages auto reads the first page: those are held until auto knows
// whether that page stands (release(true) passes them on) or the walk of
// the style it proved fetches it again (release(false) drops them), so
// that progress counts the first page once.
type firstPageHold struct {
	r       event.Reporter
	mu      sync.Mutex
	holding bool
	held    []event.Event
}

func (h *firstPageHold) Report(e event.Event) {
	h.mu.Lock()
	if h.holding && e.Kind == event.PageReceived {
		h.held = append(h.held, e)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	h.r.Report(e)
}

// release ends the hold, passing on what it held when keep is set. A nil
// hold, or one already released, does nothing.
func (h *firstPageHold) release(keep bool) {
	if h == nil {
		return
	}
	h.mu.Lock()
	held := h.held
	h.held, h.holding = nil, false
	h.mu.Unlock()
	if keep {
		for _, e := range held {
			h.r.Report(e)
		}
	}
}

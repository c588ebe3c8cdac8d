package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
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
	first, start := *walk, st.Next
	if j.pages != "auto" {
		if isRangeStyle(j.next) && j.resume && st.Rows > 0 {
			w, err := j.client.Walk(start, nil, rangeResumeOptions(opt, st))
			if err != nil {
				return func(context.Context) iter.Seq2[*paginate.Page, error] { return failed(err) }
			}
			*walk = w
			return func(ctx context.Context) iter.Seq2[*paginate.Page, error] { return skipRows(w.All(ctx), st.Rows) }
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
	return func(ctx context.Context) iter.Seq2[*paginate.Page, error] {
		return func(yield func(*paginate.Page, error) bool) {
			var d paginate.Detection
			for p, err := range first.All(ctx) {
				if err != nil || p.Number > 1 || first.Summary().Detected.Next != "" {
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
			next, skip := opt, int64(0)
			next.Next = d.Next
			next.Concurrency = 0 // the walk's context records one outcome: see pagesAtOnce
			if isXMLStyle(d.Next) {
				next.Items = ""
			}
			if isRangeStyle(d.Next) && j.resume && st.Rows > 0 {
				next, skip = rangeResumeOptions(next, st), st.Rows
			}
			w, err := j.client.Walk(start, nil, next)
			if err != nil {
				yield(nil, err)
				return
			}
			switched, *walk = &d, w
			for p, err := range skipRows(w.All(ctx), skip) {
				if err == nil && isXMLStyle(d.Next) {
					// The sink was made for JSON items: give it the
					// objects an XML walk's sink would write.
					if p.Items, err = xmlItemsJSON(nil, p.Number, p.Items); err != nil {
						p = nil
					}
				}
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

// rangeResumeOptions are the options of a resumed Range walk. A Range walk
// starts where its first request's Range header says, and a walk's
// request has no header of the harvest's to say it (ADR 0329): so a
// resume walks from the first row again, with MaxRows counted from there,
// and skipRows drops the st.Rows rows the file holds.
func rangeResumeOptions(opt paginate.Options, st *harvestState) paginate.Options {
	if opt.MaxRows > 0 {
		opt.MaxRows += int(st.Rows)
	}
	return opt
}

// skipRows yields seq's pages without their first n items; pages left
// empty are not yielded.
func skipRows(seq iter.Seq2[*paginate.Page, error], n int64) iter.Seq2[*paginate.Page, error] {
	return func(yield func(*paginate.Page, error) bool) {
		for p, err := range seq {
			if err == nil && n > 0 {
				k := min(n, int64(len(p.Items)))
				n -= k
				if int(k) == len(p.Items) && p.Next != nil {
					continue
				}
				p.Items = p.Items[k:]
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
// explicit computed style, one page at a time otherwise. A retry.Outcome
// records one call, so a walk fetching pages at once runs without one (see
// outcomeRecorder), and --pages auto keeps its outcome for the link walks it
// mostly settles on.
func (j *job) pagesAtOnce() int {
	switch name, _, _ := strings.Cut(paginate.Spelling(j.next), ":"); name {
	case "offset", "page", "range":
		if j.concurrency > 1 {
			return j.concurrency
		}
	}
	return 0
}

// outcomeRecorder returns ctx recording why retrying stopped on the walk's last
// page, for the exit code; a walk fetching pages at once records none, and
// then only a final 429 says a rate limit stopped it.
func (j *job) outcomeRecorder(ctx context.Context) (context.Context, *retry.Outcome) {
	if j.pagesAtOnce() > 1 {
		return ctx, new(retry.Outcome)
	}
	return retry.WithOutcome(ctx)
}

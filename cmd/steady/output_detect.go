package main

import (
	"context"
	"errors"
	"fmt"
	"iter"

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
func (j *job) autoPages(walk **paginate.Walk, opt paginate.Options, start string) func(context.Context) iter.Seq2[*paginate.Page, error] {
	first := *walk
	if j.pages != "auto" {
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
			next := opt
			next.Next = d.Next
			if isXMLStyle(d.Next) {
				next.Items = ""
			}
			w, err := j.client.Walk(start, nil, next)
			if err != nil {
				yield(nil, err)
				return
			}
			switched, *walk = &d, w
			for p, err := range w.All(ctx) {
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

package paginate

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/liveness"
)

// Pages walks the pages that start at req, following next links with
// opt.Next, and yields each page or, last, the error that ended the walk.
// It is NewWalk(client, req, opt).All(ctx); use a [Walk] when you want its
// [Summary] afterwards.
func Pages(ctx context.Context, client *http.Client, req *http.Request, opt Options) iter.Seq2[*Page, error] {
	return NewWalk(client, req, opt).All(ctx)
}

// A Walk is one page walk: the pages from a first request onward, and a
// [Summary] of what it fetched. Range over [Walk.All]; read [Walk.Summary]
// during or after the walk. Ranging again starts over from the first
// request.
type Walk struct {
	client *http.Client
	req    *http.Request
	opt    Options

	mu         sync.Mutex // guards what Summary reads
	sum        Summary
	lastHeader http.Header
	tracker    *liveness.Tracker
	retries0   int64
	pace       pace // what the ETA divides by
}

// NewWalk prepares a walk from req with client (nil: [http.DefaultClient]).
// req is never modified: each page is fetched with a clone of it (method,
// headers, and a body through GetBody) that differs only in its URL.
func NewWalk(client *http.Client, req *http.Request, opt Options) *Walk {
	if client == nil {
		client = http.DefaultClient
	}
	return &Walk{client: client, req: req, opt: opt}
}

// Summary is what a walk fetched, and where it stopped.
type Summary struct {
	Pages int   // pages received
	Items int   // items yielded, after any MaxRows trim
	Bytes int64 // body bytes received
	// Retries is how many attempts the retrying transport re-sent during
	// the walk, read from the call's [liveness.Tracker]; 0 when the
	// client does not retry.
	Retries int64
	// RateLimit holds the rate-limit headers of the last response
	// (X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset,
	// RateLimit, RateLimit-Policy) that it carried; nil when none.
	RateLimit http.Header
	// Complete reports that the last page said there were no more, and
	// that every item was yielded.
	Complete bool
	// Next is where the walk would continue: the page that failed or was
	// not fetched because of a cap or a break. Nil when the walk is
	// complete or its last link was refused.
	Next *url.URL
	// NextRange is the Range header to send to Next to continue a
	// [Range] walk, such as "200-299"; "" for the other styles.
	NextRange string
	// Trimmed is how many items of the last page MaxRows held back.
	Trimmed int
	// Total is how many items the walk's first page announced the whole
	// collection has (see [Options.TotalField]); 0 when it announced
	// none. A complete walk that yielded fewer, with no cap to explain
	// it, fell short of what the server said it holds.
	Total int64
	// Detected is what [Auto] and [FindItems] found; zero fields for what
	// was not asked for or not yet found.
	Detected Detected
	// ETA is how long the rest of the walk is estimated to take, as of
	// its last page: see [Options.Estimator]. 0 when nothing is left or
	// no total was announced.
	ETA time.Duration
}

// Detected is what a walk found out for itself about the pages.
type Detected struct {
	// Next is the strategy [Auto] chose: "link" or "json-links"; "" until
	// a page named a next one.
	Next string
	// Items is the dotted items path [FindItems] found ("" for a top-level
	// array), valid when ItemsFound is set.
	Items      string
	ItemsFound bool
}

// rateLimitHeaders are the response headers a summary keeps.
var rateLimitHeaders = []string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "Ratelimit", "Ratelimit-Policy"}

// Summary returns what the walk has fetched so far. It is safe to call from
// any goroutine.
func (w *Walk) Summary() Summary {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.sum
	if w.tracker != nil {
		s.Retries = w.tracker.Retries() - w.retries0
	}
	for _, name := range rateLimitHeaders {
		if v := w.lastHeader.Values(name); len(v) > 0 {
			if s.RateLimit == nil {
				s.RateLimit = make(http.Header)
			}
			s.RateLimit[name] = append([]string(nil), v...)
		}
	}
	return s
}

// All returns the walk as an iterator. Each page is yielded with a nil
// error; a failure is yielded once, as (nil, err), and ends the walk. Pages
// already yielded stay valid: a refused or repeated next link is reported
// after the page that carried it. Breaking out of the loop stops the walk;
// nothing is left open, because each body is read and closed before its
// page is yielded. When ctx ends, the error is ctx's own.
//
// A [LinkHeader] walk sends the request for the next page as soon as a
// page's body is read, before that page is checked and yielded (see
// [Options.Concurrency]). When the page fails its check, or the loop stops
// at it, that request is cancelled and its answer never seen. It asks
// nothing ahead while MaxRows may end the walk at the page, at MaxPages,
// or after a page of more than 4 MiB.
//
// All pages share one [liveness.Tracker] (ctx's, or a new one), which each
// page marks, so a retrying transport's stall budget measures silence
// across the whole walk. Each request asks that transport to read the body
// inside the attempt ([liveness.WithBodyInAttempt]).
func (w *Walk) All(ctx context.Context) iter.Seq2[*Page, error] {
	return func(yield func(*Page, error) bool) {
		ctx, tr := liveness.Ensure(ctx)
		w.mu.Lock()
		w.sum, w.lastHeader = Summary{}, nil
		w.tracker, w.retries0 = tr, tr.Retries()
		w.pace = pace{start: time.Now(), waited0: tr.Waited()}
		w.mu.Unlock()

		pl, err := newPlan(w.req, w.opt)
		if err != nil {
			yield(nil, err)
			return
		}
		guard := newLoopGuard(pl.redact, pl.first)
		pl.client = guardRedirects(w.client, pl.policy, guard)
		reqCtx := liveness.WithBodyInAttempt(ctx, pl.limit)
		var hints hints
		var fa *ahead
		if pl.steps != nil && w.opt.Concurrency > 1 {
			fa = &ahead{w: w, pl: pl, guard: guard, ctx: reqCtx, max: w.opt.Concurrency}
			defer fa.drop()
		}
		var pre *future // the page after p, asked for while p is checked
		defer func() { pre.stop() }()
		t := pl.firstTarget(w.req)
		for n := 1; ; n++ {
			var p *Page
			var next *target
			var linkErr error
			early := false // next and linkErr are known already
			switch {
			case fa != nil && n > 1:
				p, err = fa.take(ctx, n, t)
			case pl.headerLinked():
				p, next, linkErr, err = w.linkedPage(ctx, reqCtx, pl, guard, t, n, &hints, &pre)
				early = true
			default:
				p, err = w.page(ctx, reqCtx, pl, guard, t, n, &hints)
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if p == nil {
				return // the server clamped a request past the end
			}
			if !early {
				next, linkErr = w.following(pl, p, guard)
			}
			if linkErr != nil {
				linkErr = walkError(pl.redact, linkErr)
			}
			if next != nil {
				p.Next = next.u
			}
			stop, trimmed := w.trim(p, n)
			w.record(pl, p, n, trimmed, linkErr == nil, next)
			w.report(ctx, pl, p)

			if !yield(p, nil) || stop {
				return
			}
			if linkErr != nil {
				yield(nil, linkErr)
				return
			}
			if next == nil {
				return
			}
			t = *next
		}
	}
}

// firstTarget is the walk's first request: the first URL, and for [Range]
// a Range header when the page size is known.
func (pl *plan) firstTarget(req *http.Request) target {
	t := target{u: pl.first}
	if pl.steps != nil {
		t = pl.steps.firstTarget(t, req.Header.Get("Range") != "")
	}
	return t
}

// following returns the request for the page after p, checked, or nil after
// the last page.
func (w *Walk) following(pl *plan, p *Page, guard *loopGuard) (*target, error) {
	if pl.steps != nil {
		return w.stepNext(pl, p, guard)
	}
	u, err := w.nextURL(pl, p, guard)
	if u == nil || err != nil {
		return nil, err
	}
	return &target{u: u}, nil
}

// page fetches page n from t. A failure comes back as the error the walk
// yields: ctx's own when it ended, the redacted walk error otherwise, with
// the summary's resume point set.
func (w *Walk) page(ctx, reqCtx context.Context, pl *plan, guard *loopGuard, t target, n int, h *hints) (*Page, error) {
	if err := ctx.Err(); err != nil {
		w.stopAt(&t)
		return nil, err
	}
	p, err := w.fetch(reqCtx, pl, t, n, h)
	return w.settle(ctx, pl, guard, t, n, p, err)
}

// settle completes the fetch of page n from t: a page that redirected to
// one already received is not delivered again, and a failure sets the
// resume point. It returns no page and no error when a computed walk's
// request past the announced end came back as a page already received:
// servers such as json-server 1.x clamp a page number past the last to
// the last, and the walk is complete (ADR 0355).
func (w *Walk) settle(ctx context.Context, pl *plan, guard *loopGuard, t target, n int, p *Page, err error) (*Page, error) {
	if err == nil && guard.landed(t.u, p.URL) {
		err = &Error{Err: ErrLoop, Page: n, URL: pl.redact.URL(t.u), Link: pl.redact.URL(p.URL),
			Detail: "the link redirected to a page already received"}
		w.stopAt(nil)
		return nil, walkError(pl.redact, err)
	}
	if err != nil {
		w.stopAt(&t)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, walkError(pl.redact, err)
	}
	if pl.steps != nil && pl.steps.repeated(p) {
		if pl.steps.pastEnd() {
			w.endAt()
			return nil, nil
		}
		w.stopAt(nil)
		return nil, walkError(pl.redact, &Error{Err: ErrLoop, Page: n, URL: pl.redact.URL(t.u), Link: pl.redact.URL(t.u),
			Detail: "the page holds the same items as one received before: the server ignores the paging parameter"})
	}
	return p, nil
}

// trim applies MaxRows and MaxPages to page n: it cuts the items past the
// row cap and reports whether the walk stops after this page.
func (w *Walk) trim(p *Page, n int) (stop bool, trimmed int) {
	if w.opt.MaxRows > 0 {
		left := w.opt.MaxRows - w.sum.Items
		if p.Items.Len() >= left {
			trimmed = p.Items.Len() - left
			p.Items = p.Items.Slice(0, left)
			stop = true
		}
	}
	if w.opt.MaxPages > 0 && n >= w.opt.MaxPages {
		stop = true
	}
	return stop, trimmed
}

// record adds page n to the summary. linkOK is false when the page's next
// link was refused, which leaves the walk incomplete.
func (w *Walk) record(pl *plan, p *Page, n, trimmed int, linkOK bool, next *target) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n == 1 {
		w.sum.Total = announcedTotal(p, pl.total)
	}
	w.sum.Pages++
	w.sum.Items += p.Items.Len()
	w.sum.Bytes += int64(len(p.Body))
	w.sum.Trimmed = trimmed
	w.sum.Complete = p.Next == nil && linkOK && trimmed == 0
	w.sum.Next, w.sum.NextRange = p.Next, ""
	if next != nil {
		w.sum.NextRange = next.rng
	}
	w.sum.Detected = pl.detected
	w.lastHeader = p.Header
	w.sum.ETA = w.eta(p)
}

// endAt marks the walk complete after the page before: the page fetched
// past the announced end was the server's clamp, not a page of its own.
func (w *Walk) endAt() {
	w.mu.Lock()
	w.sum.Next, w.sum.NextRange, w.sum.Complete = nil, "", true
	w.mu.Unlock()
}

// stopAt sets the resume point to t (nil: none) on a walk that ends there.
func (w *Walk) stopAt(t *target) {
	w.mu.Lock()
	w.sum.Next, w.sum.NextRange, w.sum.Complete = nil, "", false
	if t != nil {
		w.sum.Next, w.sum.NextRange = t.u, t.rng
	}
	w.mu.Unlock()
}

// nextURL asks the strategy for the next link of p and puts it through the
// policy and the loop guard. It returns nil, nil on the last page.
func (w *Walk) nextURL(pl *plan, p *Page, guard *loopGuard) (*url.URL, error) {
	href, err := pl.nextLink(p)
	if err == nil && href == "" {
		return nil, nil
	}
	var next *url.URL
	if err == nil {
		next, err = pl.policy.Resolve(href, p.URL)
	}
	if err == nil {
		// A link that echoes a secret is followed without it: the
		// credentials layer attaches the key where it belongs.
		next = pl.redact.KeyFree(next)
		if guard.see(next) {
			err = &Error{Err: ErrLoop, Link: credentials.RedactURL(next)}
		}
	}
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			e = &Error{Err: err}
		}
		e.Page, e.URL = p.Number, credentials.RedactURL(p.URL)
		return nil, e
	}
	return next, nil
}

// nextLink asks the walk's strategy for p's next link; under [Auto], the
// first page that names one decides the strategy for the rest.
func (pl *plan) nextLink(p *Page) (string, error) {
	if !pl.auto {
		return pl.next.NextLink(p)
	}
	if pl.detected.Next != "" {
		return pl.next.NextLink(p)
	}
	if declaredXML(p) && len(p.Header.Values("Link")) == 0 {
		return "", &Error{Err: ErrUndetected, Detail: "the page is XML, and Auto follows Link headers and JSON links",
			Hint: "walk an S3 listing with XMLCursor, which Detect proves from this page"}
	}
	href, chosen, err := detectNext(p)
	if chosen != nil {
		pl.next, pl.detected.Next = chosen, strategyName(chosen)
	}
	return href, err
}

func (w *Walk) report(ctx context.Context, pl *plan, p *Page) {
	if w.opt.Reporter == nil {
		return
	}
	method := w.req.Method
	if method == "" {
		method = http.MethodGet
	}
	// An announced total lets a renderer show a share: this page's
	// X-Total-Count, else what the first page announced.
	w.mu.Lock()
	total, eta := pageTotal(p, w.sum.Total), w.sum.ETA
	w.mu.Unlock()
	event.Emit(w.opt.Reporter, event.Event{
		Kind:       event.PageReceived,
		Method:     method,
		URL:        pl.redact.URL(p.URL),
		Host:       p.URL.Host,
		Status:     p.Status,
		Done:       p.Number,
		Items:      int64(p.Items.Len()),
		Bytes:      int64(len(p.Body)),
		TotalItems: total,
		ETA:        eta,
		Context:    ctx,
	})
}

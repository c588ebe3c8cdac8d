package paginate

import (
	"context"
	"runtime"
)

// A walk that follows Link headers knows the next page's URL once a page
// has arrived: it asks for that page at once, and checks and hands over
// this one while the next is on its way (ADR 0368).

// headerLinked reports whether the walk's next page is named by the Link
// header alone, so it is known before the page's body is read.
func (pl *plan) headerLinked() bool {
	return pl.steps == nil && pl.xml == nil && pl.next == LinkHeader
}

// prefetches reports whether the walk asks for the page after p while p is
// checked and yielded: not when the caller asked for one page at a time
// (Concurrency 1), nor when a cap may end the walk at p, whose items are
// not yet counted, nor for a page so large that holding two of them would
// cost more than the overlap saves.
func (w *Walk) prefetches(ctx context.Context, p *Page, n int) bool {
	return ctx.Err() == nil && w.opt.Concurrency != 1 && w.opt.MaxRows == 0 &&
		(w.opt.MaxPages == 0 || n < w.opt.MaxPages) && len(p.Body) <= maxPrealloc
}

// prefetch asks for page n at t on a goroutine of its own; h sizes its
// buffer, as the page before it would.
func (w *Walk) prefetch(ctx context.Context, pl *plan, t target, n int, h hints) *future {
	ctx, cancel := context.WithCancel(ctx)
	f := &future{n: n, t: t, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.p, f.err = w.receive(ctx, pl, t, n, &h)
	}()
	runtime.Gosched() // on one P the request would wait until this goroutine blocks: let it go out first
	return f
}

// linkedPage returns page n of a Link walk from t, checked, and its next
// link (or the error that refused it), having asked for the page after it
// already where it may; *pre is that request.
func (w *Walk) linkedPage(ctx, reqCtx context.Context, pl *plan, guard *loopGuard, t target, n int, h *hints, pre **future) (p *Page, next *target, linkErr, err error) {
	p, err = w.arrived(ctx, reqCtx, pl, guard, t, n, h, *pre)
	*pre = nil
	if err != nil {
		return nil, nil, nil, err
	}
	next, linkErr = w.following(pl, p, guard)
	if linkErr == nil && next != nil && w.prefetches(ctx, p, n) {
		*pre = w.prefetch(reqCtx, pl, *next, n+1, *h)
	}
	if err := pl.check(p); err != nil {
		w.stopAt(&t)
		return nil, nil, nil, walkError(pl.redact, err)
	}
	return p, next, linkErr, nil
}

// arrived returns page n from t, read but not checked: pre's answer when
// it was asked for ahead, else a request's.
func (w *Walk) arrived(ctx, reqCtx context.Context, pl *plan, guard *loopGuard, t target, n int, h *hints, pre *future) (*Page, error) {
	if err := ctx.Err(); err != nil {
		pre.stop()
		w.stopAt(&t)
		return nil, err
	}
	if pre == nil {
		p, err := w.receive(reqCtx, pl, t, n, h)
		return w.settle(ctx, pl, guard, t, n, p, err)
	}
	<-pre.done
	pre.cancel()
	if pre.p != nil {
		h.body = len(pre.p.Body)
	}
	return w.settle(ctx, pl, guard, t, n, pre.p, pre.err)
}

// stop cancels f, if any, and waits for it, so that it does not outlive
// the walk.
func (f *future) stop() {
	if f == nil {
		return
	}
	f.cancel()
	<-f.done
}

package paginate

import (
	"context"
)

// ahead fetches the pages of a computed walk before they are taken, at most
// max at once, through the walk's own client (ADR 0301). The pages are
// predicted from the page about to be taken, on the assumption that every
// page is full; when a page turns out otherwise, the walk ends there or
// asks for a request that was not predicted, and what was fetched for the
// wrong predictions is dropped unseen.
type ahead struct {
	w     *Walk
	pl    *plan
	guard *loopGuard
	ctx   context.Context // the walk's request context
	max   int
	queue []*future // in page order
}

// A future is one page being fetched ahead.
type future struct {
	n      int
	pos    int64
	t      target
	cancel context.CancelFunc
	done   chan struct{}
	p      *Page
	err    error
}

// take returns page n, which the walk asks for at t, and keeps up to max
// pages after it in flight.
func (a *ahead) take(ctx context.Context, n int, t target) (*Page, error) {
	if len(a.queue) > 0 && !sameTarget(a.queue[0], n, t) {
		a.drop()
	}
	if err := ctx.Err(); err != nil {
		a.w.stopAt(&t)
		return nil, err
	}
	if len(a.queue) == 0 {
		a.launch(n, a.pl.steps.pos, t)
	}
	a.fill()
	f := a.queue[0]
	a.queue = a.queue[1:]
	<-f.done
	f.cancel()
	return a.w.settle(ctx, a.pl, a.guard, f.t, n, f.p, f.err)
}

func sameTarget(f *future, n int, t target) bool {
	return f.n == n && f.t.rng == t.rng && f.t.u.String() == t.u.String()
}

// fill launches the pages after the last one in flight, each at the
// position a full page before it leads to, until max are in flight, the
// announced total or MaxPages is reached, or the policy refuses a URL (the
// walk then meets the refusal itself, in order).
func (a *ahead) fill() {
	s := a.pl.steps
	for len(a.queue) < a.max {
		last := a.queue[len(a.queue)-1]
		pos := s.st.advance(last.pos, s.size)
		if s.size <= 0 || s.total >= 0 && s.st.index(pos, s.size) >= s.total ||
			a.w.opt.MaxPages > 0 && last.n >= a.w.opt.MaxPages {
			return
		}
		t := s.st.target(a.pl.first, pos, s.size)
		u, err := a.pl.policy.Resolve(t.u.String(), a.pl.first)
		if err != nil {
			return
		}
		t.u = a.pl.redact.KeyFree(u)
		a.launch(last.n+1, pos, t)
	}
}

func (a *ahead) launch(n int, pos int64, t target) {
	ctx, cancel := context.WithCancel(a.ctx)
	f := &future{n: n, pos: pos, t: t, cancel: cancel, done: make(chan struct{})}
	a.queue = append(a.queue, f)
	h := hints{}
	go func() {
		defer close(f.done)
		f.p, f.err = a.w.fetch(ctx, a.pl, t, n, &h)
	}()
}

// drop cancels every page in flight and waits for them, so that none
// outlives the walk.
func (a *ahead) drop() {
	for _, f := range a.queue {
		f.cancel()
	}
	for _, f := range a.queue {
		<-f.done
	}
	a.queue = nil
}

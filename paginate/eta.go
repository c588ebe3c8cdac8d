package paginate

import (
	"strconv"
	"strings"
	"time"
)

// An Estimator tells how long requests take by the quotas it knows: the
// requests left to host on route (the path's first segment, as
// ratelimit.Route names it) from now, at the measured rate in requests a
// second when that is slower (0: not measured); negative when the quotas
// never allow them. A *ratelimit.Pacer is one.
type Estimator interface {
	ETA(host, route string, requests int64, rate float64, now time.Time) time.Duration
}

// pace is what a walk's ETA divides by.
type pace struct {
	start   time.Time     // when the walk began
	waited0 time.Duration // the tracker's waiting then
	size    int           // the most items a page held: a page of the rest
}

// eta estimates how long the rest of the walk takes after page p: the
// pages left by the announced total and the page size, at the pace the
// Estimator allows and the walk measured, whichever is slower. Called
// under w.mu, after p is recorded.
func (w *Walk) eta(p *Page) time.Duration {
	w.pace.size = max(w.pace.size, p.Items.Len())
	total := pageTotal(p, w.sum.Total)
	left := total - w.opt.ItemsBefore - int64(w.sum.Items)
	if w.opt.MaxRows > 0 {
		left = min(left, int64(w.opt.MaxRows-w.sum.Items))
	}
	if total <= 0 || left <= 0 || w.pace.size == 0 || w.sum.Complete {
		return 0
	}
	pages := (left + int64(w.pace.size) - 1) / int64(w.pace.size)
	now := time.Now()
	// The measured rate leaves out the waits (quota holds, Retry-After):
	// those are the quotas' share, which the Estimator computes; what is
	// measured is how fast pages come when nothing holds them.
	var rate float64 // pages a second
	busy := now.Sub(w.pace.start)
	if w.tracker != nil {
		busy -= w.tracker.Waited() - w.pace.waited0
	}
	if busy > 0 {
		rate = float64(w.sum.Pages) / busy.Seconds()
	}
	if w.opt.Estimator != nil && p.URL != nil {
		return max(w.opt.Estimator.ETA(p.URL.Host, route(p.URL.Path), pages, rate, now), 0)
	}
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(pages) / rate * float64(time.Second))
}

// pageTotal is the collection's size as p announces it in X-Total-Count,
// else announced, what the first page said.
func pageTotal(p *Page, announced int64) int64 {
	if total, err := strconv.ParseInt(p.Header.Get("X-Total-Count"), 10, 64); err == nil && total >= 0 {
		return total
	}
	return announced
}

// route is the path's first segment, what a named quota is drawn by.
func route(path string) string {
	r, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return r
}

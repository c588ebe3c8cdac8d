package paginate

import (
	"net/url"
	"sync"

	"github.com/steadyhttp/steady/credentials"
)

// loopGuard remembers the pages a walk has asked for and received, so that
// no page is delivered twice. It compares URLs as the server names one
// page: without the fragment (#top names the page it is on), without any
// parameter holding one of the walk's secrets (a self link that echoes the
// key is the page without it, which the credentials layer completes), and
// without userinfo. The link a walk follows, every redirect hop (through
// the walk's redirect check) and the final URL it lands on are checked, so
// a link that redirects back to an earlier page ends the walk before that
// page is fetched or delivered again.
//
// Its methods are safe for concurrent use: the redirect check of pages
// fetched ahead runs on their goroutines.
type loopGuard struct {
	mu   sync.Mutex
	red  *credentials.Redactor
	seen fingerprintSet // 16 bytes a page, not the URL's text (ADR 191)
}

func newLoopGuard(red *credentials.Redactor, first *url.URL) *loopGuard {
	g := &loopGuard{red: red}
	g.see(first)
	return g
}

// key returns the form of u the guard compares.
func (g *loopGuard) key(u *url.URL) string {
	c := *g.red.KeyFree(u)
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// see records u and reports whether it, or a URL naming the same page, was
// seen before.
func (g *loopGuard) see(u *url.URL) bool {
	return g.add(g.key(u))
}

// seeTarget is see for a request that a Range header tells apart from
// others to the same URL.
func (g *loopGuard) seeTarget(t target) bool {
	k := g.key(t.u)
	if t.rng != "" {
		k += "\x00Range: " + t.rng
	}
	return g.add(k)
}

func (g *loopGuard) add(k string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen.add(k)
}

// back reports whether a redirect met while fetching page from leads to a
// page seen before, other than the one being fetched: the hop is refused
// before it is sent. A redirect back to the page's own URL (a server
// setting a cookie, say) is left to the client's redirect limit.
func (g *loopGuard) back(to, from *url.URL) bool {
	k := g.key(to)
	if k == g.key(from) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen.contains(k)
}

// landed records where the request for u ended after redirects, final, and
// reports whether that page was seen before. Landing where the link
// pointed is not a repeat.
func (g *loopGuard) landed(u, final *url.URL) bool {
	if final == nil || g.key(final) == g.key(u) {
		return false
	}
	return g.see(final)
}

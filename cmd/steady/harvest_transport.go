package main

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

// harvestHeaders are the -H headers of a harvest: credential headers
// become keys scoped to the URL's host (as get scopes them), the rest are
// sent by pageTransport, each to the URL's origin only unless it is a
// content-negotiation header (ADR 307).
type harvestHeaders struct {
	keys   []credentials.Key
	origin http.Header // sent only to the first URL's origin
	any    http.Header // the negotiation headers, sent everywhere
}

// steadyHeaders are the request headers a harvest sends itself: a Range
// walk's position, and the conditional body continuation.
var steadyHeaders = []string{"Range", "Range-Unit", "If-Range"}

// parseHarvestHeaders reads -H values.
func (g *globals) parseHarvestHeaders(list []string, target *url.URL) (*harvestHeaders, error) {
	h := &harvestHeaders{origin: http.Header{}, any: http.Header{}}
	for _, raw := range list {
		name, value, ok := strings.Cut(raw, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			// The value is left out: it may be a secret.
			return nil, usagef("invalid header %q: want 'Name: value'", credentials.Redact(raw, value))
		}
		for _, own := range steadyHeaders {
			if strings.EqualFold(name, own) {
				return nil, usagef("-H %s is steady's to send: --pages range sets the Range of each page, and a broken body is continued by steady itself", name)
			}
		}
		switch {
		case credentials.IsCredentialHeader(name) && value != "":
			var err error
			if h.keys, err = g.addHandKey(h.keys, target, name, value); err != nil {
				return nil, err
			}
		case isNegotiation(name):
			h.any.Add(name, value)
		default:
			h.origin.Add(name, value)
		}
	}
	return h, nil
}

// pageTransport sits above the client's stack, so that it sees every page
// request and every redirect hop of a walk, each on its own. It adds the
// -H headers a hop's origin may have, and gives every request an
// [retry.Outcome] of its own: pages fetched at once (--concurrent) would
// otherwise write into one record. The outcome of each request that did not
// end in a success is kept under the page it was for (its first hop's URL
// and Range), so that the failure that ended the walk is read from the
// page that failed, whichever others were in flight (ADR 0352).
type pageTransport struct {
	next    http.RoundTripper
	origin  string // originOf the harvest's first URL
	headers *harvestHeaders

	mu       sync.Mutex
	outcomes map[string]*retry.Outcome
}

func newPageTransport(next http.RoundTripper, first *url.URL, h *harvestHeaders) *pageTransport {
	if h == nil {
		h = &harvestHeaders{}
	}
	return &pageTransport{next: next, origin: originOf(first), headers: h, outcomes: map[string]*retry.Outcome{}}
}

func (t *pageTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, out := retry.WithOutcome(req.Context())
	r := req.WithContext(ctx)
	if len(t.headers.any) > 0 || len(t.headers.origin) > 0 {
		r.Header = req.Header.Clone()
		if r.Header == nil {
			r.Header = http.Header{}
		}
		add := func(h http.Header) {
			for name, v := range h {
				r.Header[name] = v // the user's, over the walk's own (Accept)
			}
		}
		add(t.headers.any)
		// A redirect hop back to the origin has them again; a hop or a
		// next link to any other origin never.
		if originOf(req.URL) == t.origin {
			add(t.headers.origin)
		} else {
			for name := range t.headers.origin {
				r.Header.Del(name)
			}
		}
	}
	resp, err := t.next.RoundTrip(r)
	key := pageKey(firstHop(req))
	t.mu.Lock()
	if err == nil && resp.StatusCode < 300 {
		delete(t.outcomes, key)
	} else {
		t.outcomes[key] = out
	}
	t.mu.Unlock()
	if resp != nil && resp.Request == r {
		resp.Request = req
	}
	return resp, err
}

// outcome is the record of the last request made for the page at u with
// the Range rng, empty when it has none (it succeeded, or was never sent).
// Read it after the walk ended: the transport fills it in as it returns.
func (t *pageTransport) outcome(u *url.URL, rng string) *retry.Outcome {
	if u == nil {
		return new(retry.Outcome)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if o := t.outcomes[u.String()+"\x00"+rng]; o != nil {
		return o
	}
	return new(retry.Outcome)
}

// firstHop is the request a redirect chain started from: the page's own.
func firstHop(req *http.Request) *http.Request {
	for req.Response != nil && req.Response.Request != nil {
		req = req.Response.Request
	}
	return req
}

func pageKey(req *http.Request) string {
	return req.URL.String() + "\x00" + req.Header.Get("Range")
}

// pageTransport puts a pageTransport above the client's stack, once.
func (j *job) pageTransport() *pageTransport {
	hc := j.client.HTTP()
	if pt, ok := hc.Transport.(*pageTransport); ok {
		return pt
	}
	pt := newPageTransport(hc.Transport, j.origin, j.headers)
	hc.Transport = pt
	return pt
}

// walked is a page with the Range header that continues the walk after
// it ("" but for --pages range).
type walked struct {
	page      *paginate.Page
	nextRange string
}

// withRanges pairs each page of seq with its walk's NextRange, read while
// the walk waits for the page to be taken, when the summary is that
// page's: the loop that writes pages runs a page behind the walk.
func withRanges(walk **paginate.Walk, seq func(context.Context) iter.Seq2[*paginate.Page, error]) func(context.Context) iter.Seq2[walked, error] {
	return func(ctx context.Context) iter.Seq2[walked, error] {
		return func(yield func(walked, error) bool) {
			for p, err := range seq(ctx) {
				w := walked{page: p}
				if err == nil {
					w.nextRange = (*walk).Summary().NextRange
				}
				if !yield(w, err) {
					return
				}
			}
		}
	}
}

package paginate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/liveness"
)

// drainBytes bounds what is read from a failed page's body so that its
// connection can be reused; anything longer is cut off by closing it.
const drainBytes = 64 << 10

// maxPrealloc bounds the buffer sized from a Content-Length before any byte
// arrived: a server may declare more than it sends.
const maxPrealloc = 4 << 20

// hints carry sizes from one page to the next: pages of one walk are alike,
// so sizing the next page's buffers from the last one saves regrowing them.
type hints struct {
	body int
}

// fetch requests page n at u and returns it read, closed and, where JSON is
// expected, checked.
func (w *Walk) fetch(ctx context.Context, pl *plan, t target, n int, h *hints) (*Page, error) {
	p, err := w.receive(ctx, pl, t, n, h)
	if err != nil {
		return nil, err
	}
	if err := pl.check(p); err != nil {
		return nil, err
	}
	return p, nil
}

// receive requests page n at u and returns it read and closed, not yet
// checked.
func (w *Walk) receive(ctx context.Context, pl *plan, t target, n int, h *hints) (*Page, error) {
	u := t.u
	req, err := w.request(ctx, t, n == 1)
	if err != nil {
		return nil, err
	}
	resp, err := pl.client.Do(req)
	if err != nil {
		var refused *Error
		if errors.As(err, &refused) {
			return nil, redirectRefused(refused, n, u)
		}
		return nil, &Error{Err: err, Page: n, URL: credentials.RedactURL(u)}
	}
	defer resp.Body.Close()
	final := u
	if resp.Request != nil && resp.Request.URL != nil {
		final = resp.Request.URL
	}
	if final != u {
		// However the hop was followed (a caller's CheckRedirect, or a
		// transport that follows redirects itself), the page must come
		// from where a link could have led.
		if err := pl.policy.Check(final, u); err != nil {
			return nil, redirectRefused(err.(*Error), n, u)
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, ExcerptBytes))
		_, _ = io.CopyN(io.Discard, resp.Body, drainBytes)
		return nil, &Error{Err: ErrStatus, Page: n, URL: credentials.RedactURL(final),
			Status: resp.StatusCode, Excerpt: strings.ToValidUTF8(string(excerpt), "\uFFFD")}
	}
	body, err := readBody(resp, pl.limit, h.body)
	if err != nil {
		return nil, &Error{Err: err, Page: n, URL: credentials.RedactURL(final)}
	}
	h.body = len(body)
	w.tracker.Mark() // a page arrived: the walk is not silent, whatever comes next
	return &Page{Number: n, URL: final, Status: resp.StatusCode, Header: resp.Header, Body: body, requested: u}, nil
}

// check reads p's body as the walk expects it: JSON, with its items and
// the strategy's value found, or an XML listing.
func (pl *plan) check(p *Page) error {
	if pl.needJSON() {
		if err := pl.parse(p); err != nil {
			return err
		}
	}
	if pl.xml != nil {
		pg, err := pl.xml.readXML(p.Body)
		if err != nil {
			return &Error{Err: err, Page: p.Number, URL: credentials.RedactURL(p.URL)}
		}
		p.xml = &pg
		if pl.xmlItems {
			p.Items = itemsOf(pg.items)
		}
	}
	return nil
}

// guardRedirects returns a copy of client whose redirects obey the
// next-link policy (ADR 142): a next link on an allowed host that
// redirects elsewhere (169.254.169.254, say) is refused before the hop is
// sent, as the link itself would be. The client's own CheckRedirect, or
// net/http's limit of ten, then applies as before.
func guardRedirects(client *http.Client, policy Policy, guard *loopGuard) *http.Client {
	c := *client
	inner := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := policy.Check(req.URL, via[len(via)-1].URL); err != nil {
			return err
		}
		if guard.back(req.URL, via[0].URL) {
			return &Error{Err: ErrLoop, Link: credentials.RedactURL(req.URL)}
		}
		if inner != nil {
			return inner(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// redirectRefused completes the policy's refusal of a redirect met while
// fetching page n at u.
func redirectRefused(e *Error, n int, u *url.URL) *Error {
	e.Page, e.URL = n, credentials.RedactURL(u)
	e.Detail = fmt.Sprintf("the request for page %d was redirected there", n)
	return e
}

// request clones the walk's first request for t. Only the URL differs, and
// for [Range] the Range header; a Host override is kept only while the walk
// stays on the first host.
func (w *Walk) request(ctx context.Context, t target, first bool) (*http.Request, error) {
	u := t.u
	r := w.req.Clone(ctx)
	r.URL = u
	if t.rng != "" {
		if r.Header == nil {
			r.Header = make(http.Header)
		}
		r.Header.Set("Range-Unit", "items")
		r.Header.Set("Range", t.rng)
	}
	if u.Host != w.req.URL.Host {
		r.Host = ""
	}
	if w.req.GetBody != nil {
		body, err := w.req.GetBody()
		if err != nil {
			return nil, &Error{Err: err, URL: credentials.RedactURL(u), Detail: "could not get the request body again"}
		}
		r.Body = body
	} else if !first && r.Body != nil && r.Body != http.NoBody {
		return nil, optionsError("the request has a body that cannot be sent again (it has no GetBody)")
	}
	return r, nil
}

// readBody reads resp's body, at most limit bytes (-1: no limit). A body
// that the retrying transport already holds in memory is taken without a
// copy. The limit is enforced here too, since the client may not retry.
func readBody(resp *http.Response, limit int64, hint int) ([]byte, error) {
	tooLarge := func() error { return &liveness.BodyTooLargeError{Limit: limit} }
	if limit >= 0 && resp.ContentLength > limit {
		return nil, tooLarge()
	}
	if b, ok := resp.Body.(interface{ Bytes() []byte }); ok {
		data := b.Bytes()
		if limit >= 0 && int64(len(data)) > limit {
			return nil, tooLarge()
		}
		return data, nil
	}
	size := int64(hint) + 512
	most := int64(-1) // what can still arrive, -1 when unknown
	if resp.ContentLength >= 0 {
		most = resp.ContentLength + 1 // +1 so that the read meeting EOF needs no growth
		size = most
	}
	var r io.Reader = resp.Body
	if limit >= 0 {
		most = min(unknownAsMax(most), limit+1)
		size = min(size, most)
		r = io.LimitReader(resp.Body, limit+1)
	}
	buf := make([]byte, 0, min(max(size, 512), maxPrealloc))
	for {
		if len(buf) == cap(buf) {
			// Doubling, never past what can still arrive, and exactly:
			// append's growth would overshoot a large page by up to 2.4x.
			room := int64(cap(buf))
			if most > int64(len(buf)) {
				room = min(room, most-int64(len(buf)))
			}
			grown := make([]byte, len(buf), int64(len(buf))+room)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if limit >= 0 && int64(len(buf)) > limit {
			return nil, tooLarge()
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// parse checks p's body as JSON and finds its items and the strategy's
// value in one pass.
func (pl *plan) parse(p *Page) error {
	redacted := func() string { return credentials.RedactURL(p.URL) }
	if len(p.Body) == 0 {
		return &Error{Err: ErrEmptyBody, Page: p.Number, URL: redacted()}
	}
	if pl.auto && pl.detected.Next == "" && declaredXML(p) && len(p.Header.Values("Link")) == 0 {
		return nil // no JSON to read: nextLink says what walks it
	}
	if pl.findItems && !pl.detected.ItemsFound {
		// Not JSON at all is left to the scan below, which says where it
		// breaks; the path stays unset until a page has items.
		path, detail, ok := findItems(p.Body)
		switch {
		case ok:
			pl.paths[0] = path
			pl.detected.Items, pl.detected.ItemsFound = strings.Join(path, "."), true
		case detail != "":
			return &Error{Err: ErrNoItems, Page: p.Number, URL: redacted(), Detail: detail,
				Hint: "set Options.Items to where the items are"}
		}
	}
	s := scanner{data: p.Body, paths: pl.paths, items: -1}
	if pl.wantItems() {
		s.items = 0
	}
	if err := s.scan(pl.mask); err != nil {
		return &Error{Err: ErrNotJSON, Page: p.Number, URL: redacted(), Offset: err.offset, Detail: err.msg}
	}
	if pl.wantItems() {
		if f := s.found[0]; f.start < 0 || !s.isArr {
			detail, hint := describeMissing(pl.paths[0], p.Body, f)
			return &Error{Err: ErrNoItems, Page: p.Number, URL: redacted(), Detail: detail, Hint: hint}
		}
		p.Items = s.list
	}
	if f := s.found[1]; pl.mask&2 != 0 && f.start >= 0 {
		p.nextJSON = p.Body[f.start:f.end:f.end]
	}
	return nil
}

// describeMissing says why no items array was found at path, and what
// would fix it.
func describeMissing(path []string, body []byte, f span) (detail, hint string) {
	where := fmt.Sprintf("at %q", strings.Join(path, "."))
	if len(path) == 0 {
		where = "at the top level"
	}
	if f.start < 0 {
		return "nothing " + where, "set Options.Items to where the items are"
	}
	var kind string
	switch body[f.start] {
	case '{':
		kind = "an object"
	case '"':
		kind = "a string"
	case 't', 'f':
		kind = "a boolean"
	default:
		kind = "a number"
	}
	msg := kind + ", not an array, " + where
	if len(path) == 0 && kind == "an object" {
		hint = "set Options.Items to the key that holds the items"
	}
	return msg, hint
}

// unknownAsMax maps -1 (unknown) to the largest int64, for a min.
func unknownAsMax(n int64) int64 {
	if n < 0 {
		return 1<<63 - 1
	}
	return n
}

package paginate

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// ErrTotal: a walk whose style computes its pages ([Offset], [PageNumber],
// [Range]) held fewer or more items than the first page announced. The
// [*Error]'s Detail names both numbers.
var ErrTotal = errors.New("the pages do not add up to the announced total")

// Offset pages by an item offset: the query parameter param (absent: 0) of
// each next request is the last one's plus the number of items its page
// held, as json-server's _start or SQL's OFFSET. limitParam, when set, is
// the parameter that holds the page size; a page with fewer items is the
// last. Without it the first page's size is the page size. Every next URL
// is the walk's first URL with param replaced.
func Offset(param, limitParam string) Next { return offsetStyle{param: param, limit: limitParam} }

// PageNumber pages by a page number: the query parameter param (absent: 1)
// goes up by one a page, as json-server's _page. sizeParam, when set, holds
// the page size; otherwise the first page's size is. Page numbers start at
// 1, which is what lets an announced total be checked.
func PageNumber(param, sizeParam string) Next { return pageStyle{param: param, size: sizeParam} }

// Range pages with HTTP range headers in items, as PostgREST does: each
// request sends Range-Unit: items and Range: a-b, and each answer (206 or
// 200) says which items it holds and how many there are in Content-Range:
// a-b/total, or */total when it holds none. The URL never changes. size is
// the page size of the first request (0: the first request's own Range
// header, else none, and the server's page size after it).
func Range(size int) Next { return rangeStyle{size: size} }

// The stop rules all three computed styles share (ADR 0300): a page with no
// items, or with fewer than the page size, is the last; so is the page that
// reaches the announced total. A total the pages fall short of or exceed is
// [ErrTotal].

type offsetStyle struct{ param, limit string }

func (o offsetStyle) validate() error {
	if err := checkParam("Offset", o.param); err != nil {
		return err
	}
	if o.limit != "" {
		return checkParam("Offset's limit", o.limit)
	}
	return nil
}

func (o offsetStyle) start(u *url.URL, _ http.Header) (int64, int, error) {
	pos, _, err := queryInt(u, o.param)
	if err != nil {
		return 0, 0, err
	}
	return pos, limitOf(u, o.limit), nil
}

func (o offsetStyle) target(first *url.URL, pos int64, _ int) target {
	return target{u: withQuery(first, o.param, strconv.FormatInt(pos, 10))}
}

func (offsetStyle) advance(pos int64, n int) int64     { return pos + int64(n) }
func (offsetStyle) index(pos int64, _ int) int64       { return pos }
func (o offsetStyle) NextLink(p *Page) (string, error) { return handNext(o, p) }

type pageStyle struct{ param, size string }

func (s pageStyle) validate() error {
	if err := checkParam("PageNumber", s.param); err != nil {
		return err
	}
	if s.size != "" {
		return checkParam("PageNumber's size", s.size)
	}
	return nil
}

func (s pageStyle) start(u *url.URL, _ http.Header) (int64, int, error) {
	pos, present, err := queryInt(u, s.param)
	if err != nil {
		return 0, 0, err
	}
	if !present {
		pos = 1
	}
	if pos < 1 {
		return 0, 0, fmt.Errorf("%w: page numbers start at 1, and %s is 0", ErrOptions, s.param)
	}
	return pos, limitOf(u, s.size), nil
}

func (s pageStyle) target(first *url.URL, pos int64, _ int) target {
	return target{u: withQuery(first, s.param, strconv.FormatInt(pos, 10))}
}

func (pageStyle) advance(pos int64, _ int) int64      { return pos + 1 }
func (pageStyle) index(pos int64, size int) int64     { return (pos - 1) * int64(size) }
func (s pageStyle) NextLink(p *Page) (string, error)  { return handNext(s, p) }
func (rangeStyle) advance(pos int64, n int) int64     { return pos + int64(n) }
func (rangeStyle) index(pos int64, _ int) int64       { return pos }
func (r rangeStyle) NextLink(p *Page) (string, error) { return handNext(r, p) }

type rangeStyle struct{ size int }

func (r rangeStyle) validate() error {
	if r.size < 0 {
		return optionsError("Range's size cannot be negative")
	}
	return nil
}

func (r rangeStyle) start(_ *url.URL, h http.Header) (int64, int, error) {
	v := strings.TrimSpace(h.Get("Range"))
	if v == "" {
		return 0, r.size, nil
	}
	a, b, ok := parseSpan(strings.TrimPrefix(v, "items="))
	if !ok {
		return 0, 0, fmt.Errorf("%w: the request's Range header %q is not a-b", ErrOptions, v)
	}
	if b < 0 {
		return a, r.size, nil
	}
	return a, int(b - a + 1), nil
}

func (rangeStyle) target(first *url.URL, pos int64, size int) target {
	if size <= 0 {
		if pos == 0 {
			return target{u: first}
		}
		return target{u: first, rng: strconv.FormatInt(pos, 10) + "-"}
	}
	return target{u: first, rng: strconv.FormatInt(pos, 10) + "-" + strconv.FormatInt(pos+int64(size)-1, 10)}
}

// parseSpan reads "a-b" or "a-" (b = -1) with a <= b.
func parseSpan(s string) (a, b int64, ok bool) {
	as, bs, found := strings.Cut(s, "-")
	a, ok = parseCount(strings.TrimSpace(as))
	if !found || !ok {
		return 0, 0, false
	}
	if bs = strings.TrimSpace(bs); bs == "" {
		return a, -1, true
	}
	b, ok = parseCount(bs)
	return a, b, ok && a <= b
}

// contentRange reads a Content-Range of items: "a-b/total", "a-b/*" or
// "*/total", with an optional "items " unit. first is -1 for "*"; total is
// -1 when unknown. ok is false when the header is absent or unreadable.
func contentRange(v string) (first, last, total int64, ok bool) {
	v = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "items "))
	span, tot, found := strings.Cut(v, "/")
	if !found {
		return 0, 0, 0, false
	}
	total = -1
	if tot != "*" {
		if total, ok = parseCount(tot); !ok {
			return 0, 0, 0, false
		}
	}
	if span == "*" {
		return -1, -1, total, true
	}
	first, last, ok = parseSpan(span)
	return first, last, total, ok && last >= 0
}

// limitOf reads the page size from the query parameter param of u; 0 when
// param is "" or absent or not a number above 0.
func limitOf(u *url.URL, param string) int {
	if param == "" {
		return 0
	}
	n, _, err := queryInt(u, param)
	if err != nil || n <= 0 || n > 1<<31 {
		return 0
	}
	return int(n)
}

// handNext is NextLink of a computed style for a page on its own: the next
// request after p from what p's URL and items say. It cannot know an
// announced total, and Range has no link to give.
func handNext(s stepper, p *Page) (string, error) {
	base := p.requested
	if base == nil {
		base = p.URL
	}
	if base == nil {
		return "", fmt.Errorf("%w: the page has no URL to compute the next one from", ErrBadLink)
	}
	if _, ok := s.(rangeStyle); ok {
		return "", fmt.Errorf("%w: Range pages by a header, not a link; walk them", ErrOptions)
	}
	pos, size, err := s.start(base, nil)
	if err != nil {
		return "", err
	}
	n := p.Items.Len()
	if n == 0 || n < size {
		return "", nil
	}
	return s.target(base, s.advance(pos, n), size).u.String(), nil
}

package paginate

import (
	"crypto/sha256"
	"fmt"
	"net/http"
)

// stepState is what a walk of a computed style ([Offset], [PageNumber],
// [Range]) knows about where it is.
type stepState struct {
	st    stepper
	pos   int64 // position of the page the walk takes next
	size  int   // page size; 0 until known
	total int64 // items the first page announced; -1 for none
	asked bool  // size is what the first request asked for, not what its page held
	// pageCount is the number of pages the first page of a PageNumber walk
	// announced in a top-level "pages"; -1 for none.
	pageCount int64
	pages     fingerprintSet
	// first is [Options.Range]: the first request's Range header, "" for
	// the request's own.
	first string
}

func newStepState(st stepper, pl *plan, h http.Header) (*stepState, error) {
	pos, size, err := st.start(pl.first, h)
	if err != nil {
		return nil, &Error{Err: ErrOptions, Detail: err.Error()}
	}
	return &stepState{st: st, pos: pos, size: size, total: -1, asked: size > 0, pageCount: -1}, nil
}

// firstTarget is the walk's first request: the first URL as given, with a
// Range header for [Range] when a page size is known.
func (s *stepState) firstTarget(first target, hasRange bool) target {
	if s.first != "" {
		return target{u: first.u, rng: s.first}
	}
	if _, ok := s.st.(rangeStyle); ok && !hasRange && s.size > 0 {
		return s.st.target(first.u, s.pos, s.size)
	}
	return first
}

// stepNext applies the stop rules to page p of a computed walk and returns
// the request for the next page, checked by the next-link policy and the
// loop guard, or nil after the last page. An error ends the walk after p.
func (w *Walk) stepNext(pl *plan, p *Page, guard *loopGuard) (*target, error) {
	s, k := pl.steps, p.Items.Len()
	fail := func(err error, detail string) error {
		return &Error{Err: err, Page: p.Number, URL: pl.redact.URL(p.URL), Detail: detail}
	}
	if p.Number == 1 {
		if s.size == 0 {
			s.size = k
		}
		if t, ok := announced(p, pl.total); ok {
			s.total = t
		}
		if _, isPage := s.st.(pageStyle); isPage && pl.total == nil {
			s.pageCount = announcedPages(p)
		}
	}
	if detail := s.checkRange(p); detail != "" {
		return nil, fail(ErrBadLink, detail)
	}
	if detail := s.checkPages(k); detail != "" {
		return nil, fail(ErrTotal, detail)
	}
	end := s.st.index(s.pos, s.size) + int64(k)
	last, wrong := s.isLast(p.Number, k, end)
	if wrong != "" {
		return nil, fail(ErrTotal, wrong)
	}
	if last {
		if s.pageCount >= 0 && s.pos < s.pageCount {
			return nil, fail(ErrTotal, fmt.Sprintf("the first page announced %d pages, and the pages ended at page %d", s.pageCount, s.pos))
		}
		return nil, nil
	}
	s.pos = s.st.advance(s.pos, k)
	t := s.st.target(pl.first, s.pos, s.size)
	u, err := pl.policy.Resolve(t.u.String(), p.URL)
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			e = &Error{Err: err}
		}
		e.Page, e.URL = p.Number, pl.redact.URL(p.URL)
		return nil, e
	}
	t.u = pl.redact.KeyFree(u)
	if guard.seeTarget(t) {
		return nil, &Error{Err: ErrLoop, Page: p.Number, URL: pl.redact.URL(p.URL), Link: pl.redact.URL(t.u)}
	}
	return &t, nil
}

// isLast applies the stop rules to page n, which held k items and ended at
// item end, or returns what makes its count wrong. A page shorter than the
// size asked for is the server's own cap rather than the end when the
// announced total says more follow, or, on the first page, when no total
// says anything: the walk takes that size and asks once more, so a server
// that serves fewer than asked does not end the walk after one page.
func (s *stepState) isLast(n, k int, end int64) (bool, string) {
	_, isRange := s.st.(rangeStyle)
	_, isPage := s.st.(pageStyle)
	more := s.total >= 0 && end < s.total
	capped := k > 0 && k < s.size &&
		(n == 1 && s.asked && (s.total < 0 || more) || !isPage && more)
	switch {
	case s.total >= 0 && end > s.total:
		return true, fmt.Sprintf("the first page announced %d items, and the pages hold at least %d", s.total, end)
	case capped:
		if n == 1 {
			s.size = k
		}
		return false, ""
	case k == 0 || k < s.size || isRange && s.total >= 0 && end == s.total:
		if more {
			return true, fmt.Sprintf("the first page announced %d items, and the pages ended at %d", s.total, end)
		}
		return true, ""
	}
	return false, ""
}

// checkPages says what is wrong with a PageNumber page of k items past the
// page count the first page announced ("" when nothing is).
func (s *stepState) checkPages(k int) string {
	if s.pageCount >= 0 && s.pos > s.pageCount && k > 0 {
		return fmt.Sprintf("the first page announced %d pages, and page %d holds %d items", s.pageCount, s.pos, k)
	}
	return ""
}

// announcedPages reads a top-level "pages" that is a whole number, as
// json-server 1.x announces its page count; -1 for none.
func announcedPages(p *Page) int64 {
	s := scanner{data: p.Body, paths: [2][]string{{"pages"}}, items: -1}
	if s.scan(1) != nil || s.found[0].start < 0 {
		return -1
	}
	if n, ok := parseCount(string(p.Body[s.found[0].start:s.found[0].end])); ok {
		return n
	}
	return -1
}

// repeated reports whether page p of a computed walk holds the same items
// as a page received before: a server that ignores the paging parameter
// serves its first page again, under a URL the walk never asked for
// before. The page is then not delivered.
func (s *stepState) repeated(p *Page) bool {
	return p.Items.Len() > 0 && s.pages.add(itemsKey(p))
}

// pastEnd reports whether the page the walk takes next starts at or after
// the end the first page announced, by its total or its page count.
func (s *stepState) pastEnd() bool {
	return s.total >= 0 && s.size > 0 && s.st.index(s.pos, s.size) >= s.total ||
		s.pageCount >= 0 && s.pos > s.pageCount
}

// checkRange compares a Range page's Content-Range with what was asked and
// what arrived, and returns what disagrees ("" when all agree or the style
// is not Range).
func (s *stepState) checkRange(p *Page) string {
	if _, ok := s.st.(rangeStyle); !ok {
		return ""
	}
	v := p.Header.Get("Content-Range")
	if v == "" {
		return ""
	}
	first, last, _, ok := contentRange(v)
	k := int64(p.Items.Len())
	switch {
	case !ok:
		return fmt.Sprintf("the Content-Range %q is not a-b/total", v)
	case first < 0 && k > 0:
		return fmt.Sprintf("the Content-Range %q says the page is empty, but it holds %d items", v, k)
	case first >= 0 && first != s.pos:
		return fmt.Sprintf("the Content-Range %q starts at %d, not at %d as asked", v, first, s.pos)
	case first >= 0 && last-first+1 != k:
		return fmt.Sprintf("the Content-Range %q spans %d items, but the page holds %d", v, last-first+1, k)
	}
	return ""
}

// itemsKey is what the content guard compares: a page's items, whatever
// else (links, timestamps) its body holds, hashed so that the key costs no
// copy of the page.
func itemsKey(p *Page) string {
	h := sha256.New()
	for _, it := range p.Items.All() {
		h.Write(it)
		h.Write([]byte{0})
	}
	return string(h.Sum(nil))
}

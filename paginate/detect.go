package paginate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/steadyhttp/steady/credentials"
)

// ErrUndetected: [Detect] could not prove how the pages are linked, nor that
// the first page is the only one.
var ErrUndetected = errors.New("cannot tell how the pages are linked")

// A Detection is what [Detect] proved from a walk's first page.
type Detection struct {
	// Next is the paging style, and Spelling the same as [ParseStyle]
	// reads it; nil and "" when Single.
	Next     Next
	Spelling string
	// Items is where the page's items are, as [Options.Items] takes it
	// ("" for a top-level array, and for XML).
	Items string
	// Single says the first page is provably the whole collection: it
	// names no next page and the server says so (a Link header or links
	// array without next, a null next field, IsTruncated false, or a total
	// the page holds in full).
	Single bool
	// Total is the number of items the page announces, -1 for none.
	Total int64
	// Guessed says a parameter name in Spelling comes from a convention
	// (json-server's _start beside _limit, offset beside limit) rather
	// than from the URL; a caller should show the spelling so a person
	// can check it.
	Guessed bool
}

// nextFields are the body fields Detect reads as a next page, a cursor or a
// page number, in order.
var nextFields = []string{"next", "next_cursor", "nextCursor", "next_page", "nextPage", "next_url", "nextPageToken", "next_page_token"}

// Conventional parameter names: of an item offset, of a page size, of a page
// number.
var (
	offsetNames = []string{"offset", "_start", "start", "skip", "from"}
	limitNames  = []string{"limit", "_limit", "per_page", "_per_page", "page_size", "pageSize", "size", "count"}
	pageNames   = []string{"page", "_page", "p", "page_number", "pageNumber"}
)

// Detect proves the paging style of a walk from its first page p (fetch it
// with [NoItems] and MaxPages 1, so that any body will do), in this
// order: a Link header, a JSON links array, an XML listing with a
// continuation token, a Content-Range of items, a next field in the body (a
// URL, a page number that a parameter of the URL holds one less of, or a
// token under a name that says its parameter, such as next_cursor),
// and offset/limit or page/size parameters in the URL together with an
// announced total (X-Total-Count, Content-Range, numberMatched, a body
// items count). When none proves a style and nothing proves the page is
// the only one, the error is an [*Error] with [ErrUndetected], whose Hint
// says which explicit style would do. A malformed Link header or links
// array is [ErrBadLink]: guessing past it could end a walk short.
func Detect(p *Page) (Detection, error) {
	d := Detection{Total: -1}
	if t, ok := announced(p, nil); ok {
		d.Total = t
	}
	if found, err := detectLinks(p, &d); found || err != nil {
		if path, _, ok := findItems(p.Body); ok {
			d.Items = strings.Join(path, ".")
		}
		return d, err
	}
	if isXML(p) {
		return detectXML(p, d)
	}
	path, detail, ok := findItems(p.Body)
	if !ok {
		return d, undetected(p, "the page is not JSON with items: "+detail, "")
	}
	d.Items = strings.Join(path, ".")
	items, fields := topLevel(p.Body, path)
	if detectRange(p, &d) {
		return d, nil
	}
	if found, err := detectNextField(p, &d, fields, items); found || err != nil {
		return d, err
	}
	return detectParams(p, d, items)
}

// detectLinks finds a Link header's or a links array's next link, or a
// Link header or links array that names none (the only page).
func detectLinks(p *Page, d *Detection) (bool, error) {
	hand := *p // read as a page on its own, whatever the walk that fetched it read
	hand.requested, hand.nextJSON = nil, nil
	n := LinkHeader
	href, err := LinkHeader.NextLink(&hand)
	if err == nil && href == "" && json.Valid(p.Body) && bytes.HasPrefix(bytes.TrimSpace(p.Body), []byte("{")) {
		n = JSONLinks
		href, err = JSONLinks.NextLink(&hand)
	}
	switch {
	case err != nil:
		return true, err
	case href != "":
		d.Next, d.Spelling = n, Spelling(n)
		return true, nil
	case len(p.Header.Values("Link")) > 0 || hasLinks(p.Body):
		d.Single = true
		return true, nil
	}
	return false, nil
}

// hasLinks reports whether body is an object with a links array.
func hasLinks(body []byte) bool {
	var doc struct {
		Links json.RawMessage `json:"links"`
	}
	return json.Unmarshal(body, &doc) == nil && bytes.HasPrefix(doc.Links, []byte("["))
}

func isXML(p *Page) bool {
	ct := p.Header.Get("Content-Type")
	return strings.Contains(ct, "xml") || bytes.HasPrefix(bytes.TrimSpace(p.Body), []byte("<"))
}

// declaredXML reports whether p says it is XML: an XML media type, or an
// XML declaration first. An HTML page is not, and stays a page that is not
// JSON.
func declaredXML(p *Page) bool {
	mt, _, _ := strings.Cut(p.Header.Get("Content-Type"), ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return strings.HasSuffix(mt, "/xml") || strings.HasSuffix(mt, "+xml") ||
		bytes.HasPrefix(bytes.TrimSpace(p.Body), []byte("<?xml"))
}

// detectXML proves an S3 ListObjectsV2 listing: a root ListBucketResult
// with IsTruncated.
func detectXML(p *Page, d Detection) (Detection, error) {
	x := XMLCursor("ListBucketResult/NextContinuationToken", "continuation-token", "").(xmlStyle)
	pg, err := x.readXML(p.Body)
	if err != nil {
		return d, undetected(p, err.Error(), "")
	}
	switch {
	case strings.EqualFold(strings.TrimSpace(pg.truncated), "false"):
		d.Single = true
	case strings.TrimSpace(pg.token) != "":
		d.Next, d.Spelling = x, Spelling(x)
	default:
		return d, undetected(p, "the XML page is not an S3 listing with IsTruncated", "xml:TOKENPATH:PARAM:ITEMSPATH")
	}
	return d, nil
}

// topLevel returns the number of items at path and the page's top-level
// members (nil when the page is an array).
func topLevel(body []byte, path []string) (int, map[string]json.RawMessage) {
	s := scanner{data: body, paths: [2][]string{path}, items: 0}
	_ = s.scan(1)
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		fields = nil
	}
	return s.list.Len(), fields
}

// detectRange proves Range from a Content-Range of items; a page with no
// items, or all of them, is the only one.
func detectRange(p *Page, d *Detection) bool {
	first, last, total, ok := contentRange(p.Header.Get("Content-Range"))
	switch {
	case !ok:
		return false
	case first < 0 || first == 0 && total >= 0 && last+1 >= total:
		d.Single = true
	default:
		d.Next = Range(int(last - first + 1))
		d.Spelling = Spelling(d.Next)
	}
	return true
}

// detectNextField reads the body's next field: null is the only page, a
// URL is [BodyLink], a number is a page number that a URL parameter holds
// one less of, a token is a [Cursor] when its field's name says the
// parameter (tokenParam).
func detectNextField(p *Page, d *Detection, fields map[string]json.RawMessage, items int) (bool, error) {
	for _, name := range nextFields {
		raw, ok := fields[name]
		if !ok {
			continue
		}
		v, err := cursorValue(raw)
		switch {
		case err != nil:
			return true, undetected(p, fmt.Sprintf("the field %q holds %s", name, excerpt(raw)), "")
		case v == "":
			d.Single = true
			return true, nil
		case raw[0] == '"' && looksLikeURL(v):
			d.Next = BodyLink(name)
		case raw[0] == '"' && tokenParam(name) != "":
			d.Next, d.Guessed = Cursor(name, tokenParam(name)), true
		case raw[0] == '"':
			return true, undetected(p, fmt.Sprintf("the field %q holds a token, and nothing says which query parameter carries it", name),
				"cursor:"+name+":PARAM")
		default:
			n, err := strconv.ParseInt(v, 10, 64)
			param := paramHolding(p, strconv.FormatInt(n-1, 10), pageNames)
			if err != nil || param == "" {
				return true, undetected(p, fmt.Sprintf("the field %q says page %s, and no query parameter of the URL holds page %d", name, v, n-1),
					"page:PARAM, with PARAM=1 in the URL")
			}
			d.Next = PageNumber(param, paramHolding(p, strconv.Itoa(items), limitNames))
		}
		d.Spelling = Spelling(d.Next)
		return true, nil
	}
	return false, nil
}

// tokenParam is the query parameter that, by the common convention, sends
// back the token of field: the field's name without its "next" (Slack's
// next_cursor is sent as cursor, Google's nextPageToken as pageToken); ""
// for a field named only next.
func tokenParam(field string) string {
	rest, ok := strings.CutPrefix(field, "next_")
	if !ok {
		rest, ok = strings.CutPrefix(field, "next")
		if ok && rest != "" {
			rest = strings.ToLower(rest[:1]) + rest[1:]
		}
	}
	if !ok || rest == "" || rest == "url" || rest == "page" {
		return ""
	}
	return rest
}

func looksLikeURL(v string) bool {
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "?") {
		return true
	}
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// paramHolding returns the query parameter of p's URL whose value is
// value: the one among names, else the only one; "" when none or several.
func paramHolding(p *Page, value string, names []string) string {
	var found []string
	for k, vs := range requestedURL(p).Query() {
		if len(vs) == 1 && vs[0] == value {
			found = append(found, k)
		}
	}
	for _, k := range found {
		if slices.Contains(names, k) {
			return k
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

func requestedURL(p *Page) *url.URL {
	if p.requested != nil {
		return p.requested
	}
	if p.URL != nil {
		return p.URL
	}
	return &url.URL{}
}

func undetected(p *Page, detail, spelling string) error {
	hint := "name the paging style explicitly"
	if spelling != "" {
		hint += ", such as " + spelling
	}
	return &Error{Err: ErrUndetected, Page: p.Number, URL: credentials.RedactURL(requestedURL(p)), Detail: detail, Hint: hint}
}

// detectParams proves a computed style from the URL's paging parameters
// and an announced total: a total the page holds in full makes it the
// only page; otherwise the parameters say how to ask for the next.
func detectParams(p *Page, d Detection, items int) (Detection, error) {
	q := requestedURL(p).Query()
	off, lim, pg := firstIn(q, offsetNames), firstIn(q, limitNames), firstIn(q, pageNames)
	if d.Total < 0 {
		return d, undetected(p, "nothing on the first page names a next page or announces a total", "offset:PARAM[:LIMITPARAM] or page:PARAM")
	}
	var start int64
	if n, ok := parseCount(q.Get(off)); ok && off != "" {
		start = n
	} else if n, ok := parseCount(q.Get(pg)); ok && pg != "" && n > 0 {
		start = (n - 1) * int64(items)
	}
	if d.Total <= start+int64(items) {
		d.Single = true
		return d, nil
	}
	conventions := map[string][2]string{"_limit": {"_start", ""}, "limit": {"offset", ""}, "_per_page": {"", "_page"}, "per_page": {"", "page"}}
	switch c := conventions[lim]; {
	case pg != "":
		d.Next = PageNumber(pg, lim)
	case off != "":
		d.Next = Offset(off, lim)
	case c[0] != "":
		d.Next, d.Guessed = Offset(c[0], lim), true
	case c[1] != "":
		d.Next, d.Guessed = PageNumber(c[1], lim), true
	default:
		return d, undetected(p, fmt.Sprintf("the page announces %d items and holds %d, and no parameter of its URL pages them", d.Total, items),
			"offset:PARAM[:LIMITPARAM] or page:PARAM")
	}
	d.Spelling = Spelling(d.Next)
	return d, nil
}

// firstIn returns the first of names that q has; "" for none.
func firstIn(q url.Values, names []string) string {
	for _, n := range names {
		if q.Has(n) {
			return n
		}
	}
	return ""
}

package paginate

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/steadyhttp/steady/credentials"
)

// A Next finds where the page after a given one is. Implementations only
// read the page; the walk resolves and checks what they return with the
// next-link policy ([Policy.Resolve]) and guards against loops, so a custom
// strategy cannot weaken either.
type Next interface {
	// NextLink returns the target of the link to the page after p, as
	// the server wrote it (relative or absolute), or "" when p is the last
	// page. A link that is present but empty or malformed is an error,
	// never "": ending quietly would pass a partial walk as complete.
	NextLink(p *Page) (string, error)
}

// LinkHeader follows the RFC 8288 Link header: the first link whose rel
// includes "next" and that has no anchor parameter (an anchor makes it the
// next of some other resource). No such link ends the walk, unless the
// header holds a malformed link-value that could have been one: a link cut
// short before its '>', or text that mentions next but does not parse as a
// link. That is [ErrBadLink], since ending there would pass a partial walk
// off as complete.
var LinkHeader Next = linkHeader{}

// JSONLinks follows the top-level "links" array of OGC API Features and STAC
// responses: a link object whose rel includes "next", with its href. When
// several next links differ in type, the one of the page's own media type
// wins, then any JSON type, then one without a type. When every next link
// asks for a method other than GET (a STAC POST search), that is an error
// rather than a silent end.
var JSONLinks Next = jsonLinks{}

// Cursor follows a cursor: the value of the JSON field at the dotted path
// field (a string or a number, such as "next_cursor" or "meta.next") is set
// as the query parameter param on the URL the walk requested for the
// current page. A field that is absent, null or empty ends the walk. A
// repeated cursor is caught by the walk's loop guard.
func Cursor(field, param string) Next {
	return cursorNext{field: field, param: param}
}

// Auto chooses the strategy on the first page that names a next one: a
// Link header with a next link means [LinkHeader], else a top-level
// "links" array with a next link means [JSONLinks]. The choice then holds
// for the rest of the walk, and [Summary.Detected] says which it was. A
// first page with neither is the only page. A malformed Link header, or a
// "links" member that is not an array of link objects, is an error rather
// than a guess: ending there could pass a partial walk off as complete.
// Auto reads every page as JSON; cursors are not detected, since any field
// could be one. A first page that is XML with no Link header is delivered
// without items and ends the walk with [ErrUndetected], naming [XMLCursor]
// ([Detect] proves an S3 listing from that page).
var Auto Next = autoNext{}

type autoNext struct{}

func (autoNext) jsonPath() []string { return []string{"links"} }

// NextLink detects the strategy of one page on its own; a walk keeps the
// first choice instead of asking again.
func (autoNext) NextLink(p *Page) (string, error) {
	href, _, err := detectNext(p)
	return href, err
}

// detectNext tries each strategy Auto knows on p and returns the next link
// and the strategy that found it, or "" and nil when p names none.
func detectNext(p *Page) (string, Next, error) {
	if href, err := LinkHeader.NextLink(p); err != nil || href != "" {
		return href, LinkHeader, err
	}
	if href, err := JSONLinks.NextLink(p); err != nil || href != "" {
		return href, JSONLinks, err
	}
	return "", nil, nil
}

// strategyName names the strategies Auto chooses between.
func strategyName(n Next) string {
	switch n {
	case LinkHeader:
		return "link"
	case JSONLinks:
		return "json-links"
	}
	return ""
}

type linkHeader struct{}

// NextLink reads the header with the parser behind [ParseLinkHeader], which
// also says where the header stopped being readable. A value cut short
// inside a link (by a proxy's header limit, say) must not read as "no next
// page": when no readable next link is found but a malformed link-value
// could have been one, that is an error.
func (linkHeader) NextLink(p *Page) (string, error) {
	links, bad := parseLinks(p.Header.Values("Link"))
	for _, l := range links {
		if !l.HasRel("next") {
			continue
		}
		if _, anchored := l.Param("anchor"); anchored {
			continue
		}
		if strings.IndexByte(l.Target, '<') >= 0 {
			// A link-value without its '>' ran into the next one, so
			// this target is two links' text: neither can be followed.
			if bad.what == "" {
				bad = badLink{what: "a next link's target holds '<', so a '>' before it is missing", offset: -1}
			}
			continue
		}
		if strings.TrimSpace(l.Target) == "" {
			return "", fmt.Errorf("%w: the Link header's next link has an empty target", ErrBadLink)
		}
		return l.Target, nil
	}
	if bad.what != "" {
		return "", fmt.Errorf("%w: the Link header has no readable next link, and %s", ErrBadLink, bad)
	}
	return "", nil
}

type jsonLinks struct{}

func (jsonLinks) jsonPath() []string { return []string{"links"} }

func (jsonLinks) NextLink(p *Page) (string, error) {
	raw := p.nextJSON
	if raw == nil && p.requested == nil { // a page built by hand, not by a walk
		var doc struct {
			Links json.RawMessage `json:"links"`
		}
		if err := json.Unmarshal(p.Body, &doc); err != nil {
			return "", fmt.Errorf("%w: the page is not a JSON object (%v)", ErrBadLink, err)
		}
		raw = doc.Links
	}
	return nextJSONLink(raw, p.Header.Get("Content-Type"))
}

// jsonLink is one element of a links array. Other members (title, body,
// merge, headers) are ignored.
type jsonLink struct {
	Rel    string `json:"rel"`
	Href   string `json:"href"`
	Type   string `json:"type"`
	Method string `json:"method"`
}

// nextJSONLink picks the next link out of a links array (raw, nil when the
// page has none) of a page served as pageType.
func nextJSONLink(raw json.RawMessage, pageType string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var links []jsonLink
	if err := json.Unmarshal(raw, &links); err != nil {
		return "", fmt.Errorf("%w: \"links\" is not an array of link objects (%v)", ErrBadLink, err)
	}
	page, _, _ := mime.ParseMediaType(pageType)
	var best, refused *jsonLink
	bestRank, skippedType := 0, ""
	for i := range links {
		l := &links[i]
		if !hasToken(l.Rel, "next") {
			continue
		}
		if l.Method != "" && !strings.EqualFold(l.Method, "GET") {
			refused = l
			continue
		}
		rank := 2 // no type
		if l.Type != "" {
			mt, _, err := mime.ParseMediaType(l.Type)
			switch {
			case err == nil && page != "" && mt == page:
				rank = 4
			case err == nil && isJSONType(mt):
				rank = 3
			default:
				rank, skippedType = 0, l.Type
			}
		}
		if rank > bestRank {
			best, bestRank = l, rank
		}
	}
	switch {
	case best != nil && strings.TrimSpace(best.Href) == "":
		return "", fmt.Errorf("%w: the next link has an empty href", ErrBadLink)
	case best != nil:
		return best.Href, nil
	case refused != nil:
		return "", fmt.Errorf("%w: %s %s", ErrLinkMethod, refused.Method, credentials.RedactURLString(refused.Href))
	case skippedType != "":
		return "", fmt.Errorf("%w: the only next link is of type %q, not JSON", ErrBadLink, skippedType)
	}
	return "", nil
}

// isJSONType reports whether a media type is JSON: application/json or any
// +json type such as application/geo+json.
func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

type cursorNext struct {
	field, param string
}

func (c cursorNext) jsonPath() []string {
	path, _ := splitPath(c.field, "cursor field")
	return path
}

func (c cursorNext) validate() error {
	if c.field == "" || c.param == "" {
		return optionsError("Cursor needs both a JSON field and a query parameter")
	}
	if _, err := splitPath(c.field, "cursor field"); err != nil {
		return err
	}
	if credentials.IsCredentialName(c.param) {
		return optionsError(fmt.Sprintf("cursor parameter %q looks like a credential; configure a credentials.Key to send keys", c.param))
	}
	return nil
}

func (c cursorNext) NextLink(p *Page) (string, error) {
	raw := p.nextJSON
	if raw == nil && p.requested == nil { // a page built by hand, not by a walk
		s := scanner{data: p.Body, items: -1}
		s.paths[1] = c.jsonPath()
		if err := s.scan(2); err != nil {
			return "", fmt.Errorf("%w: the page is not JSON (%s at byte %d)", ErrBadCursor, err.msg, err.offset)
		}
		if f := s.found[1]; f.start >= 0 {
			raw = p.Body[f.start:f.end]
		}
	}
	v, err := cursorValue(raw)
	if err != nil || v == "" {
		return "", err
	}
	base := p.requested
	if base == nil {
		base = p.URL
	}
	if base == nil {
		return "", fmt.Errorf("%w: the page has no URL to set the cursor on", ErrBadLink)
	}
	u := *base
	u.RawQuery = setQuery(u.RawQuery, c.param, v)
	u.ForceQuery = false
	return u.String(), nil
}

// cursorValue returns the text of a cursor: a string's value or a number as
// written; "" for absent or null.
func cursorValue(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	switch c := raw[0]; {
	case c == 'n':
		return "", nil
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("%w: %v", ErrBadCursor, err)
		}
		return s, nil
	case c == '-' || ('0' <= c && c <= '9'):
		return string(raw), nil
	case c == '{':
		return "", fmt.Errorf("%w: it is an object", ErrBadCursor)
	case c == '[':
		return "", fmt.Errorf("%w: it is an array", ErrBadCursor)
	default:
		return "", fmt.Errorf("%w: it is %s", ErrBadCursor, raw)
	}
}

// setQuery returns the query q with every name parameter replaced by one
// name=value at the end, keeping the others exactly as written.
func setQuery(q, name, value string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(q, "&") {
		if part == "" {
			continue
		}
		k, _, _ := strings.Cut(part, "=")
		if uk, err := url.QueryUnescape(k); err == nil && uk == name {
			continue
		}
		b.WriteString(part)
		b.WriteByte('&')
	}
	b.WriteString(url.QueryEscape(name))
	b.WriteByte('=')
	b.WriteString(url.QueryEscape(value))
	return b.String()
}

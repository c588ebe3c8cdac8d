package paginate

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/steadyhttp/steady/credentials"
)

// ErrStyle is the cause of every [*StyleError]: a paging style's spelling
// that [ParseStyle] cannot read.
var ErrStyle = errors.New("invalid paging style")

// A StyleError says why a spelling given to [ParseStyle] is not a style.
type StyleError struct {
	Spelling string // as given
	Reason   string
}

func (e *StyleError) Error() string {
	return fmt.Sprintf("paginate: paging style %q: %s", e.Spelling, e.Reason)
}

// Is reports whether target is [ErrStyle].
func (e *StyleError) Is(target error) bool { return target == ErrStyle }

// ParseStyle reads a paging style as a command line spells it:
//
//	link                            [LinkHeader]
//	json-links                      [JSONLinks]
//	auto                            [Auto]
//	cursor:FIELD:PARAM              [Cursor]
//	body-link:FIELD                 [BodyLink]
//	offset:PARAM[:LIMITPARAM]       [Offset]
//	page:PARAM[:SIZEPARAM]          [PageNumber]
//	range[:SIZE]                    [Range]
//	xml:TOKENPATH:PARAM[:ITEMSPATH] [XMLCursor]
//
// Anything else is a [*StyleError]. [Spelling] writes a style back.
func ParseStyle(s string) (Next, error) {
	bad := func(reason string) (Next, error) { return nil, &StyleError{Spelling: s, Reason: reason} }
	name, rest, _ := strings.Cut(s, ":")
	args := []string{}
	if rest != "" || strings.Contains(s, ":") {
		args = strings.Split(rest, ":")
	}
	for _, a := range args {
		if a == "" {
			return bad("an empty part between colons")
		}
	}
	want := func(least, most int) bool { return len(args) >= least && len(args) <= most }
	switch name {
	case "link", "json-links", "auto":
		if len(args) != 0 {
			return bad(name + " takes no parameters")
		}
		return map[string]Next{"link": LinkHeader, "json-links": JSONLinks, "auto": Auto}[name], nil
	case "cursor":
		if !want(2, 2) {
			return bad("want cursor:FIELD:PARAM")
		}
		return checked(s, Cursor(args[0], args[1]))
	case "body-link":
		if !want(1, 1) {
			return bad("want body-link:FIELD")
		}
		return checked(s, BodyLink(args[0]))
	case "offset":
		if !want(1, 2) {
			return bad("want offset:PARAM or offset:PARAM:LIMITPARAM")
		}
		return checked(s, Offset(args[0], at(args, 1)))
	case "page":
		if !want(1, 2) {
			return bad("want page:PARAM or page:PARAM:SIZEPARAM")
		}
		return checked(s, PageNumber(args[0], at(args, 1)))
	case "range":
		if !want(0, 1) {
			return bad("want range or range:SIZE")
		}
		size := 0
		if len(args) == 1 {
			n, err := strconv.Atoi(args[0])
			if err != nil || n <= 0 {
				return bad("the size must be a whole number above 0")
			}
			size = n
		}
		return checked(s, Range(size))
	case "xml":
		if !want(2, 3) {
			return bad("want xml:TOKENPATH:PARAM or xml:TOKENPATH:PARAM:ITEMSPATH")
		}
		return checked(s, XMLCursor(args[0], args[1], at(args, 2)))
	}
	return bad("unknown style (want link, json-links, auto, cursor, body-link, offset, page, range or xml)")
}

func at(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

// checked returns n when its own settings are valid.
func checked(s string, n Next) (Next, error) {
	if v, ok := n.(validator); ok {
		if err := v.validate(); err != nil {
			var e *Error
			if errors.As(err, &e) {
				return nil, &StyleError{Spelling: s, Reason: e.Detail}
			}
			return nil, &StyleError{Spelling: s, Reason: err.Error()}
		}
	}
	return n, nil
}

// Spelling writes a style of this package as [ParseStyle] reads it; "" for
// a strategy of your own.
func Spelling(n Next) string {
	switch n := n.(type) {
	case linkHeader:
		return "link"
	case jsonLinks:
		return "json-links"
	case autoNext:
		return "auto"
	case cursorNext:
		return "cursor:" + n.field + ":" + n.param
	case bodyLink:
		return "body-link:" + n.field
	case offsetStyle:
		return "offset:" + n.param + optional(n.limit)
	case pageStyle:
		return "page:" + n.param + optional(n.size)
	case rangeStyle:
		if n.size > 0 {
			return "range:" + strconv.Itoa(n.size)
		}
		return "range"
	case xmlStyle:
		return "xml:" + n.token + ":" + n.param + ":" + n.items
	}
	return ""
}

func optional(s string) string {
	if s == "" {
		return ""
	}
	return ":" + s
}

// checkParam refuses a query parameter name that is empty or looks like a
// credential.
func checkParam(what, name string) error {
	if name == "" {
		return optionsError(what + " needs a query parameter")
	}
	if credentials.IsCredentialName(name) {
		return optionsError(fmt.Sprintf("%s parameter %q looks like a credential; configure a credentials.Key to send keys", what, name))
	}
	return nil
}

// A stepper is a style whose next request is computed from where the page
// was rather than read from it, so the walk can fetch pages ahead (see
// [Options.Concurrency]). A position is an item offset or a page number.
type stepper interface {
	Next
	// start reads the position and the page size (0: unknown) of the
	// walk's first request.
	start(u *url.URL, h http.Header) (pos int64, size int, err error)
	// target returns the request for the page at pos, made from the
	// first request's URL.
	target(first *url.URL, pos int64, size int) target
	// advance returns the position after a page at pos that held n items.
	advance(pos int64, n int) int64
	// index returns the offset of the first item of the page at pos.
	index(pos int64, size int) int64
}

// A target is one request of a walk: its URL and, for [Range], the value of
// its Range header ("" for none).
type target struct {
	u   *url.URL
	rng string
}

// withQuery returns u with param set to value.
func withQuery(u *url.URL, param, value string) *url.URL {
	c := *u
	c.RawQuery = setQuery(c.RawQuery, param, value)
	c.ForceQuery = false
	return &c
}

// queryInt reads a whole number of zero or more from the query parameter
// param of u; present is false when it is absent.
func queryInt(u *url.URL, param string) (n int64, present bool, err error) {
	q := u.Query()
	if !q.Has(param) {
		return 0, false, nil
	}
	n, ok := parseCount(q.Get(param))
	if !ok {
		return 0, true, fmt.Errorf("%w: the query parameter %s is %q, not a whole number", ErrOptions, param, q.Get(param))
	}
	return n, true, nil
}

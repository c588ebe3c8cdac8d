package paginate

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Causes of a failed walk. An [*Error] carries one of them (or a transport
// error, or [liveness.ErrBodyTooLarge]) in its Err field; match them with
// [errors.Is].
var (
	// ErrCrossHost: a next link points at a host the caller did not allow.
	ErrCrossHost = errors.New("cross-host next-page link")
	// ErrScheme: a next link has a scheme other than http or https.
	ErrScheme = errors.New("next-page link with an unsupported scheme")
	// ErrDowngrade: a next link would move the walk from https to http.
	ErrDowngrade = errors.New("next-page link downgrades https to http")
	// ErrBadLink: a next link, or the structure that holds it, is malformed.
	ErrBadLink = errors.New("malformed next-page link")
	// ErrLinkMethod: a JSON next link asks for a method other than GET.
	ErrLinkMethod = errors.New("next-page link asks for a method other than GET")
	// ErrLoop: a next link (or cursor) leads to a page already fetched.
	ErrLoop = errors.New("next-page link repeats a page already fetched")
	// ErrStatus: a page answered with a status outside 2xx.
	ErrStatus = errors.New("non-2xx status")
	// ErrNotJSON: a page that must be JSON is not valid JSON.
	ErrNotJSON = errors.New("not valid JSON")
	// ErrEmptyBody: a page that must be JSON has an empty body.
	ErrEmptyBody = errors.New("empty body where JSON was expected")
	// ErrNoItems: a page has no array where [Options.Items] says the items are.
	ErrNoItems = errors.New("no items array")
	// ErrBadCursor: a cursor field holds something other than a string or a
	// number.
	ErrBadCursor = errors.New("cursor is neither a string nor a number")
	// ErrOptions: the walk was asked for something it cannot do.
	ErrOptions = errors.New("invalid page-walk options")
)

// Error is the evidence of a failed walk or a refused link: which page, which
// URL, what was wrong. Every URL in it is already redacted with
// [credentials.RedactURL]; fields that do not apply to the cause are zero.
type Error struct {
	// Err is the cause: one of the package's sentinels, a
	// [*liveness.BodyTooLargeError], or the error of the client.
	Err error
	// Page is the 1-based number of the page concerned; 0 outside a walk.
	Page int
	// URL is the page the error is about (redacted).
	URL string
	// Link is the next link that was refused or repeated (redacted).
	Link string
	// Host is the host a refused cross-host link points at, and Allowed
	// the hosts that were allowed.
	Host    string
	Allowed []string
	// Status is the HTTP status of a non-2xx page, and Excerpt at most
	// [ExcerptBytes] of its body. The excerpt is server text and is kept
	// out of Error(), because a server may echo the request, key included.
	Status  int
	Excerpt string
	// Offset is the byte offset at which a page stopped being valid JSON.
	Offset int64
	// Detail says what exactly was wrong, when the cause alone does not.
	Detail string
	// Hint says what would fix it, naming the option to change as a field
	// of [Options] ("set Options.Items to ..."). A program that offers the
	// option under another name, such as a command-line flag, may replace
	// it with its own words; "" when there is no such advice.
	Hint string
}

// ExcerptBytes bounds the body excerpt kept from a non-2xx page.
const ExcerptBytes = 1024

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("paginate: ")
	link := true // the error is about a link; the page it was on goes last
	switch {
	case errors.Is(e.Err, ErrCrossHost):
		fmt.Fprintf(&b, "refusing to follow a cross-host next-page link: %s points at %s rather than %s",
			e.Link, e.Host, strings.Join(e.Allowed, " or "))
	case errors.Is(e.Err, ErrDowngrade):
		fmt.Fprintf(&b, "refusing to follow a next-page link that downgrades https to http: %s", e.Link)
	case errors.Is(e.Err, ErrScheme):
		fmt.Fprintf(&b, "refusing to follow a next-page link that is not http(s): %s", e.Link)
	case errors.Is(e.Err, ErrLoop):
		fmt.Fprintf(&b, "next-page link repeats a page already fetched, so the walk ends: %s", e.Link)
	case errors.Is(e.Err, ErrBadLink), errors.Is(e.Err, ErrLinkMethod), errors.Is(e.Err, ErrBadCursor):
		b.WriteString(e.Err.Error())
		if e.Link != "" {
			b.WriteString(" ")
			b.WriteString(e.Link)
		}
	default:
		link = false
		if e.Page > 0 {
			fmt.Fprintf(&b, "page %d (%s)", e.Page, e.URL)
		} else if e.URL != "" {
			b.WriteString(e.URL)
		}
		switch {
		case errors.Is(e.Err, ErrStatus):
			fmt.Fprintf(&b, " answered %d %s", e.Status, http.StatusText(e.Status))
		case errors.Is(e.Err, ErrNotJSON):
			fmt.Fprintf(&b, " is not valid JSON at byte %d", e.Offset)
		default:
			if b.Len() > len("paginate: ") {
				b.WriteString(": ")
			}
			b.WriteString(causeText(e.Err))
		}
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	if link && e.Page > 0 {
		fmt.Fprintf(&b, " (on page %d, %s)", e.Page, e.URL)
	}
	return b.String()
}

// causeText is the text of a cause without the unredacted URL that a
// [*url.Error] from the client would quote.
func causeText(err error) string {
	for {
		ue, ok := err.(*url.Error)
		if !ok {
			break
		}
		err = ue.Err
	}
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

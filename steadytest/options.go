package steadytest

import (
	"errors"
	"fmt"
	"strings"
)

// Paths of the endpoints a [Handler] serves.
const (
	// ItemsPath serves the paginated collection.
	ItemsPath = "/items"
	// LookupPath serves rows by id: GET /lookup?ids=1,2,3.
	LookupPath = "/lookup"
)

// Defaults for the zero fields of [ServerOptions].
const (
	DefaultRows        = 1000
	DefaultLimit       = 100
	DefaultMaxLimit    = 1000
	DefaultMaxURLBytes = 8000

	// MaxRows bounds [ServerOptions.Rows]; rows are computed, not stored,
	// but their timestamps must stay within time.Duration's range.
	MaxRows = 100_000_000
)

// A Style is how the collection tells the client where the next page is.
type Style uint8

const (
	// LinkHeader: the body is a JSON array of rows (or an object holding
	// them under [ServerOptions.ItemsKey] when that is set) and the next page
	// is named in an RFC 8288 Link header: <URL>; rel="next". The header also
	// carries rel="last" while there are more pages, and rel="first" and
	// rel="prev" after the first page. Pages are addressed by the offset and
	// limit query parameters.
	LinkHeader Style = iota
	// JSONLinks: the body is {"numberMatched": N, "numberReturned": n,
	// "features": [...], "links": [...]}, where links holds {"rel": "self",
	// "href": URL} and, while there are more pages, {"rel": "next", "href":
	// URL}, in the manner of OGC API Features. Pages are addressed by
	// offset and limit. Every style also sends X-Total-Count.
	JSONLinks
	// Cursor: the body is {"data": [...], "next_cursor": "opaque"}; the
	// client sends the cursor back in the cursor query parameter. On the last
	// page next_cursor is null. A cursor the server did not issue is a 400.
	Cursor
	// Offset pages as json-server 0.17 does by _start and _limit (or
	// _end): the body is a bare array, the total is in X-Total-Count, and
	// nothing names the next page. _start defaults to 0 and _limit to
	// [ServerOptions.DefaultLimit].
	Offset
	// PageLimit pages as json-server 0.17 does by _page (from 1) and
	// _limit: a bare array and X-Total-Count, without the Link header
	// json-server adds, so only the page number says where the next page is.
	PageLimit
	// PerPage pages as json-server 1.x does by _page (from 1) and
	// _per_page, with the page count in the body and no header:
	// {"first":1,"prev":null,"next":2,"last":100,"pages":100,"items":10000,"data":[...]}.
	// next is null on the last page.
	PerPage
	// Range pages as PostgREST does: the request's Range header (a-b, with
	// Range-Unit: items) says which rows; the answer is a bare array with
	// Content-Range: a-b/total (*/total when empty), 206 when it holds part
	// of the collection and 200 when all of it. Without a Range header the
	// first [ServerOptions.MaxLimit] rows are served, as PostgREST's
	// max-rows does; a range that starts past the end is 416.
	Range
	// S3 pages as S3's ListObjectsV2 does: an XML ListBucketResult whose
	// Contents elements (one a row: Key rows/ID.json, Size, ETag) are
	// max-keys (default [ServerOptions.DefaultLimit]) at a time, with
	// IsTruncated and, while it is true, a NextContinuationToken the client
	// sends back as continuation-token.
	S3
)

var styleNames = [...]string{LinkHeader: "link", JSONLinks: "json-links", Cursor: "cursor",
	Offset: "offset", PageLimit: "page", PerPage: "per-page", Range: "range", S3: "s3"}

// String returns the style's name as [ParseStyle] accepts it: "link",
// "json-links", "cursor", "offset", "page", "per-page", "range" or "s3".
func (s Style) String() string {
	if int(s) < len(styleNames) {
		return styleNames[s]
	}
	return fmt.Sprintf("Style(%d)", uint8(s))
}

// ParseStyle returns the style named by s, as [Style.String] writes it.
func ParseStyle(s string) (Style, error) {
	for i, n := range styleNames {
		if strings.EqualFold(s, n) {
			return Style(i), nil
		}
	}
	return 0, &OptionsError{Field: "Style", Reason: fmt.Sprintf("unknown pagination style %q (want one of %s)", s, strings.Join(styleNames[:], ", "))}
}

// ServerOptions configure a [Server] or a [Handler]. The zero value serves
// 1,000 rows, 100 per page, paginated with a Link header, without faults.
type ServerOptions struct {
	// Rows is the size of the collection: rows with ids 1..Rows, each
	// computed from its id by [RowFor]. Zero means DefaultRows.
	Rows int

	// Style is how pages are linked. The zero value is [LinkHeader].
	Style Style
	// ItemsKey is the JSON key holding a page's rows. Zero means "features"
	// for [JSONLinks], as OGC API Features and STAC name it, and "data" for
	// [Cursor]; for [LinkHeader] an empty key
	// means the body is a bare array.
	ItemsKey string
	// CursorParam is the query parameter that carries a cursor ([Cursor]
	// style). Zero means "cursor".
	CursorParam string
	// CursorField is the body field holding the next cursor ([Cursor]
	// style). Zero means "next_cursor".
	CursorField string

	// DefaultLimit is the page size when the request has no limit parameter.
	// Zero means DefaultLimit (100).
	DefaultLimit int
	// MaxLimit is the largest page size served; a larger limit is clamped to
	// it, as most APIs do, rather than refused. Zero means DefaultMaxLimit
	// (1,000).
	MaxLimit int

	// MaxURLBytes is the longest request target (path and query) accepted;
	// longer ones get 414 URI Too Long. Zero means DefaultMaxURLBytes (8,000).
	MaxURLBytes int

	// KeyValue is the API key. When set, the key counts as present when the
	// header KeyHeader or the query parameter KeyQuery (either that is set)
	// carries exactly this value. The request log records whether it was
	// present, never the value.
	KeyValue  string
	KeyHeader string
	KeyQuery  string
	// RequireKey answers 401 to data requests without the key. When false a
	// missing key is only recorded.
	RequireKey bool

	// ForeignHost is the host (with port) that stands for "another host":
	// the target of [Redirect] and the host of a [ForeignNext] link. Zero
	// means the same server under its other loopback name: a request that
	// reached 127.0.0.1:PORT is sent to localhost:PORT and the other way
	// round, which a client must treat as a different host although it
	// serves the same data.
	ForeignHost string

	// Faults says which requests fail and how. The zero value injects none.
	Faults Faults

	// LogLimit bounds the request log for long-running servers: when it
	// holds LogLimit entries the oldest quarter is dropped. Zero keeps every
	// request; a negative value keeps none.
	LogLimit int

	// OnRequest, when set, is called as each request arrives, after it is
	// logged and before any fault is applied. It must be safe for concurrent
	// use and return quickly. Tests use it to learn that a request reached
	// the server, for example before closing it during a hang.
	OnRequest func(Request)
}

// ErrInvalidOptions is the cause of every [OptionsError].
var ErrInvalidOptions = errors.New("invalid server options")

// An OptionsError names the option that was wrong and why.
type OptionsError struct {
	Field  string // e.g. "MaxLimit", "Faults.Mix[2].P"
	Reason string
}

func (e *OptionsError) Error() string {
	return "steadytest: invalid " + e.Field + ": " + e.Reason
}

// Is reports whether target is [ErrInvalidOptions].
func (e *OptionsError) Is(target error) bool { return target == ErrInvalidOptions }

// withDefaults returns o with every zero field replaced by its default.
func (o ServerOptions) withDefaults() ServerOptions {
	if o.Rows == 0 {
		o.Rows = DefaultRows
	}
	if o.DefaultLimit == 0 {
		o.DefaultLimit = DefaultLimit
	}
	if o.MaxLimit == 0 {
		o.MaxLimit = DefaultMaxLimit
	}
	if o.MaxURLBytes == 0 {
		o.MaxURLBytes = DefaultMaxURLBytes
	}
	if o.ItemsKey == "" {
		switch o.Style {
		case JSONLinks:
			o.ItemsKey = "features"
		case Cursor:
			o.ItemsKey = "data"
		}
	}
	if o.CursorParam == "" {
		o.CursorParam = "cursor"
	}
	if o.CursorField == "" {
		o.CursorField = "next_cursor"
	}
	return o
}

// Validate reports the first option that is out of range, as an
// [*OptionsError].
func (o ServerOptions) Validate() error {
	d := o.withDefaults()
	bad := func(field, format string, args ...any) error {
		return &OptionsError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case o.Rows < 0:
		return bad("Rows", "%d is negative", o.Rows)
	case o.Rows > MaxRows:
		return bad("Rows", "%d is above %d", o.Rows, MaxRows)
	case int(o.Style) >= len(styleNames):
		return bad("Style", "unknown style %d", o.Style)
	case o.DefaultLimit < 0:
		return bad("DefaultLimit", "%d is negative", o.DefaultLimit)
	case o.MaxLimit < 0:
		return bad("MaxLimit", "%d is negative", o.MaxLimit)
	case d.DefaultLimit > d.MaxLimit:
		return bad("DefaultLimit", "%d is above MaxLimit %d", d.DefaultLimit, d.MaxLimit)
	case o.MaxURLBytes < 0:
		return bad("MaxURLBytes", "%d is negative", o.MaxURLBytes)
	case o.CursorParam == "offset" || o.CursorParam == "limit":
		return bad("CursorParam", "%q is already a pagination parameter", o.CursorParam)
	case o.KeyValue == "" && (o.KeyHeader != "" || o.KeyQuery != ""):
		return bad("KeyValue", "empty, but KeyHeader or KeyQuery names where a key goes")
	case o.KeyValue != "" && o.KeyHeader == "" && o.KeyQuery == "":
		return bad("KeyHeader", "neither KeyHeader nor KeyQuery is set, so the key can never be present")
	case o.RequireKey && o.KeyValue == "":
		return bad("RequireKey", "set without a KeyValue")
	case o.KeyQuery != "" && (o.KeyQuery == "limit" || o.KeyQuery == "offset" || o.KeyQuery == d.CursorParam || o.KeyQuery == "ids"):
		return bad("KeyQuery", "%q is already a parameter of the API", o.KeyQuery)
	}
	return o.Faults.validate()
}

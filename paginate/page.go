package paginate

import (
	"encoding/json"
	"net/http"
	"net/url"
)

// A Page is one response of a walk, its body already read and closed.
type Page struct {
	// Number is the page's 1-based position in the walk.
	Number int
	// URL is the page's final URL, after any redirects the client
	// followed. Relative next links are resolved against it.
	URL *url.URL
	// Status and Header are the response's.
	Status int
	Header http.Header
	// Body is the whole body, at most [Options.MaxPageBytes].
	Body []byte
	// Items are the page's items, found where [Options.Items] says, each
	// the exact JSON text of one array element. They share memory with
	// Body rather than copying it. Empty with [NoItems]; after
	// [Options.MaxRows] the last page's Items are trimmed.
	Items Items
	// Next is the checked URL of the page after this one; nil on the last
	// page or when the link was refused (the walk then yields the error
	// after this page).
	Next *url.URL

	requested *url.URL        // the URL the walk asked for
	nextJSON  json.RawMessage // the value at the strategy's JSON path, nil when absent
	xml       *xmlPage        // what an XMLCursor walk read, nil otherwise
}

package credentials

import (
	"net/url"
	"strings"
)

// Query strings are split at '&' and at ';'. net/url splits only at '&', but
// some servers still split at ';', and a parameter any server would see is
// one a secret can hide in. Splitting more finely never exposes more.

// paramEnd returns the index of the separator that ends the parameter
// starting at i in q, or len(q).
func paramEnd(q string, i int) int {
	if j := strings.IndexAny(q[i:], "&;"); j >= 0 {
		return i + j
	}
	return len(q)
}

// decodeName unescapes a raw parameter name as a server would; ok is false
// when its escapes are malformed.
func decodeName(raw string) (name string, ok bool) {
	if !strings.ContainsAny(raw, "%+") {
		return raw, true
	}
	n, err := url.QueryUnescape(raw)
	if err != nil {
		return raw, false
	}
	return n, true
}

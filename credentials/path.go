package credentials

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// pathMarker stands, in a sealed path, for the secret at index i of the
// Redactor's secrets: text no escaping changes and no server is likely to
// put in a path.
func pathMarker(i int) string { return "~steady-secret-" + strconv.Itoa(i) + "~" }

const markerPrefix = "~steady-secret-"

// SealPath returns u with every one of r's secrets in its path, as written
// or percent-escaped in any form [Redactor.Contains] finds, replaced by a
// marker that names which secret it was, so that a next link a server
// built with the key in its path can be written to a file without it and
// followed later with [Redactor.UnsealPath]. It returns u itself when the
// path holds none. The query is [Redactor.KeyFree]'s. A secret inside
// base64 in a path is not looked for.
func (r *Redactor) SealPath(u *url.URL) *url.URL {
	if r == nil || u == nil {
		return u
	}
	p := u.EscapedPath()
	sealed := replaceEscaped(p, r.secrets, true, pathMarker)
	if sealed == p {
		return u
	}
	c := *u
	c.Path, c.RawPath = unescapePath(sealed), sealed
	return &c
}

// UnsealPath puts r's secrets back where [Redactor.SealPath] left markers,
// each path-escaped. It fails, naming no secret, when a marker stands for
// a secret r does not hold: the URL was sealed by a client with other
// keys.
func (r *Redactor) UnsealPath(u *url.URL) (*url.URL, error) {
	if u == nil || !strings.Contains(u.EscapedPath(), markerPrefix) {
		return u, nil
	}
	p := u.EscapedPath()
	var b strings.Builder
	for {
		i := strings.Index(p, markerPrefix)
		if i < 0 {
			break
		}
		rest := p[i+len(markerPrefix):]
		end := strings.IndexByte(rest, '~')
		n, err := strconv.Atoi(rest[:max(end, 0)])
		if end < 0 || err != nil || n < 0 {
			b.WriteString(p[:i+1])
			p = p[i+1:]
			continue
		}
		if r == nil || n >= len(r.secrets) {
			return nil, fmt.Errorf("the path holds the place of secret %d, and only %d are set", n+1, r.count())
		}
		b.WriteString(p[:i])
		b.WriteString(url.PathEscape(r.secrets[n]))
		p = rest[end+1:]
	}
	b.WriteString(p)
	c := *u
	c.Path, c.RawPath = unescapePath(b.String()), b.String()
	return &c, nil
}

func (r *Redactor) count() int {
	if r == nil {
		return 0
	}
	return len(r.secrets)
}

// unescapePath decodes an escaped path as url.URL.Path holds it; text that
// is not a valid escape is kept as written.
func unescapePath(p string) string {
	if d, err := url.PathUnescape(p); err == nil {
		return d
	}
	return p
}

package steadytest

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// origin returns the scheme and host the client used to reach the server:
// links are built from the request's Host so that they work under whatever
// name and port the client chose, as behind a real load balancer.
func origin(r *http.Request) (scheme, host string) {
	scheme = "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host = r.Host
	if host == "" {
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			host = a.String()
		}
	}
	return scheme, host
}

// otherHost returns the host that stands for "another host" for a request
// that arrived at host: the configured foreign host, or the other loopback
// name of the same server.
func (h *Handler) otherHost(host string) string {
	if h.opt.ForeignHost != "" {
		return h.opt.ForeignHost
	}
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = host, ""
	}
	other := "127.0.0.1"
	if name == "127.0.0.1" {
		other = "localhost"
	}
	if port == "" {
		return other
	}
	return net.JoinHostPort(other, port)
}

// keptQuery returns the raw query without the parameters named in drop,
// keeping the order and encoding of the rest, so that a client's own
// filters survive into next links exactly as it sent them.
func keptQuery(raw string, drop ...string) string {
	if raw == "" {
		return ""
	}
	var b strings.Builder
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		name, _, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		dropped := false
		for _, d := range drop {
			if d != "" && name == d {
				dropped = true
				break
			}
		}
		if dropped {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		writeQueryPart(&b, part)
	}
	return b.String()
}

// writeQueryPart writes a query parameter as it came, except for bytes that
// may not appear in a URL's query (a '#', a space, a '>' that would end a
// Link target, a '%' that starts no escape), which are percent-encoded so
// that every link the server builds parses.
func writeQueryPart(b *strings.Builder, part string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(part); i++ {
		c := part[i]
		switch {
		case c == '%' && i+2 < len(part) && isHex(part[i+1]) && isHex(part[i+2]):
			b.WriteString(part[i : i+3])
			i += 2
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			strings.IndexByte("-._~!$'()*+,;=:@/?", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// pageLinks builds the absolute URLs of one request's neighbour pages.
type pageLinks struct {
	prefix string // scheme://host/items?kept&
	limit  int
	cursor bool   // address pages by cursor rather than offset
	param  string // the cursor parameter
}

func (h *Handler) newPageLinks(r *http.Request, scheme, host string, limit int) pageLinks {
	kept := keptQuery(r.URL.RawQuery, "limit", "offset", h.opt.CursorParam, h.opt.KeyQuery)
	prefix := scheme + "://" + host + ItemsPath + "?"
	if kept != "" {
		prefix += kept + "&"
	}
	return pageLinks{prefix: prefix, limit: limit, cursor: h.opt.Style == Cursor, param: h.opt.CursorParam}
}

// at returns the URL of the page starting at offset.
func (l pageLinks) at(offset int) string {
	s := l.prefix + "limit=" + strconv.Itoa(l.limit)
	if l.cursor {
		return s + "&" + url.QueryEscape(l.param) + "=" + encodeCursor(offset)
	}
	return s + "&offset=" + strconv.Itoa(offset)
}

// self returns the URL the client asked for, without the key, so that a
// repeated link is recognisably the one the client just fetched.
func (h *Handler) self(r *http.Request, scheme, host string) string {
	s := scheme + "://" + host + r.URL.EscapedPath()
	if q := keptQuery(r.URL.RawQuery, h.opt.KeyQuery); q != "" {
		s += "?" + q
	}
	return s
}

// rehost returns link with its host replaced by host.
func rehost(link, host string) string {
	u, err := url.Parse(link)
	if err != nil {
		return link
	}
	u.Host = host
	return u.String()
}

// withUserinfo returns link with credentials embedded in its authority.
func withUserinfo(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return link
	}
	u.User = url.UserPassword("user", "pass")
	return u.String()
}

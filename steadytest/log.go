package steadytest

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Redacted replaces the API key wherever the request log would show it.
const Redacted = "REDACTED"

// A Request is one entry of the request log.
type Request struct {
	// Seq is the 1-based arrival number among data requests (GET or HEAD
	// to ItemsPath or LookupPath), the number [Faults.Script] is keyed by;
	// 0 for other requests.
	Seq int
	// Time is when the request arrived, by the time package's clock.
	Time   time.Time
	Method string
	// Host is the Host the client sent, such as 127.0.0.1:PORT.
	Host string
	// URL is the request target (path and query) with the key redacted.
	URL string
	// Header is a copy of the request headers with the key redacted.
	Header http.Header
	// KeyPresent reports whether the configured key was present with its
	// exact value.
	KeyPresent bool
	// Attempt is how many times this page (or lookup) had been requested,
	// this request included; 0 for requests that named no valid page.
	Attempt int
	// Fault is the fault applied; its Kind is None when the request was
	// served normally or refused before any fault was drawn, and
	// QuotaExceeded when the quota refused it.
	Fault Fault
	// Status is the status sent, 0 while the request is in progress or when
	// none was sent (a reset, or a hang the client gave up on).
	Status int
}

func (r Request) clone() Request {
	r.Header = r.Header.Clone()
	return r
}

// keyPresent reports whether r carries the configured key.
func (h *Handler) keyPresent(r *http.Request) bool {
	if h.opt.KeyValue == "" {
		return false
	}
	if h.opt.KeyHeader != "" {
		for _, v := range r.Header.Values(h.opt.KeyHeader) {
			if v == h.opt.KeyValue {
				return true
			}
		}
	}
	if h.opt.KeyQuery != "" {
		for _, v := range r.URL.Query()[h.opt.KeyQuery] {
			if v == h.opt.KeyValue {
				return true
			}
		}
	}
	return false
}

// redactHeader returns a copy of hdr in which the key header's values, and
// the key wherever else it appears, read REDACTED.
func (h *Handler) redactHeader(hdr http.Header) http.Header {
	c := hdr.Clone()
	if c == nil {
		c = http.Header{}
	}
	if h.opt.KeyHeader != "" {
		if vs := c.Values(h.opt.KeyHeader); len(vs) > 0 {
			name := http.CanonicalHeaderKey(h.opt.KeyHeader)
			c[name] = make([]string, len(vs))
			for i := range vs {
				c[name][i] = Redacted
			}
		}
	}
	if h.opt.KeyValue != "" {
		for _, vs := range c {
			for i, v := range vs {
				vs[i] = h.redactText(v)
			}
		}
	}
	return c
}

// redactTarget returns a request target with the key parameter's value, and
// the key wherever else it appears, replaced.
func (h *Handler) redactTarget(target string) string {
	if h.opt.KeyQuery != "" {
		path, query, ok := strings.Cut(target, "?")
		if ok {
			parts := strings.Split(query, "&")
			for i, p := range parts {
				name, _, _ := strings.Cut(p, "=")
				n, err := url.QueryUnescape(name)
				if err != nil {
					n = name
				}
				if n == h.opt.KeyQuery {
					parts[i] = name + "=" + Redacted
				}
			}
			target = path + "?" + strings.Join(parts, "&")
		}
	}
	return h.redactText(target)
}

func (h *Handler) redactText(s string) string {
	k := h.opt.KeyValue
	if k == "" {
		return s
	}
	for _, form := range [...]string{k, url.QueryEscape(k), url.PathEscape(k)} {
		s = strings.ReplaceAll(s, form, Redacted)
	}
	return s
}

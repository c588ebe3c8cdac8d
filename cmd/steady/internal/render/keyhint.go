package render

import (
	"net"
	"net/url"
	"strings"

	"github.com/steadyhttp/steady/event"
)

// A keyHint decides when to tell the user that an API key would help: the
// host answered 429, it is one that accepts a key, and no key is set. It is
// shown at most once per renderer; repeating it on every 429 would bury the
// lines that say what is happening. Not safe for concurrent use.
type keyHint struct {
	hosts map[string]bool // normalized hosts that accept a key; nil when a key is set
	env   string
	shown bool
}

// statusTooManyRequests is HTTP 429, named here to keep net/http out of a
// leaf package.
const statusTooManyRequests = 429

func newKeyHint(o Options) keyHint {
	h := keyHint{env: o.KeyEnv}
	if o.KeySet {
		return h
	}
	for _, host := range o.KeyHosts {
		if n := normalHost(host); n != "" {
			if h.hosts == nil {
				h.hosts = make(map[string]bool)
			}
			h.hosts[n] = true
		}
	}
	return h
}

// check returns the hint line when e is the first 429 from a host that
// accepts a key.
func (h *keyHint) check(e event.Event) (line string, ok bool) {
	if h.shown || h.hosts == nil || e.Status != statusTooManyRequests {
		return "", false
	}
	host := hostOf(e)
	if !h.hosts[host] {
		return "", false
	}
	h.shown = true
	return "hint: " + host + " accepts an API key; set " + clean(h.env) + " to raise your rate limit", true
}

// hostOf is the normalized host an event is about: its Host, else the host
// of its URL.
func hostOf(e event.Event) string {
	if h := normalHost(e.Host); h != "" {
		return h
	}
	if u, err := url.Parse(e.URL); err == nil {
		return normalHost(u.Host)
	}
	return ""
}

// normalHost lowercases a host and drops its port and a trailing dot, so
// "API.example.gov:443" and "api.example.gov." name one host. The hint is
// advice, not a credential decision (that is the credentials package's), so
// the port does not matter here.
func normalHost(h string) string {
	if strings.IndexByte(h, ':') >= 0 {
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	return clean(strings.ToLower(h))
}

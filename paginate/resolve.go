package paginate

import (
	"net/url"
	"strings"

	"github.com/steadyhttp/steady/credentials"
)

// Policy is the one rule every next-page link passes before it becomes a
// request, whatever strategy found it. The zero value allows only the host
// of the page the link came from.
type Policy struct {
	// AllowedHosts lists the hosts a link may point at, as "host" or
	// "host:port", compared case-insensitively. An entry without a port
	// matches the scheme's default port only. Empty means the host of the
	// page the link came from; a walk fills it with the host of its first
	// request.
	AllowedHosts []string
	// CanonicalHost, when set, moves every link onto this host over https,
	// dropping the link's own host, port and userinfo: for services whose
	// links name an internal host. The canonical host counts as allowed.
	CanonicalHost string
}

// Resolve turns href, the target of a next link found on the page at from,
// into the URL of the next request, or refuses it with an [*Error] whose
// cause is [ErrBadLink], [ErrScheme], [ErrCrossHost] or [ErrDowngrade]:
//
//   - a relative href is resolved against from;
//   - only http and https are followed, and never from https down to http;
//   - the host must be allowed (see [Policy.AllowedHosts]);
//   - userinfo and any fragment are dropped, so a link cannot smuggle
//     credentials into the request or its log lines.
//
// The URL returned is new; from is not modified.
func (p Policy) Resolve(href string, from *url.URL) (*url.URL, error) {
	if from == nil {
		return nil, &Error{Err: ErrBadLink, Detail: "no page URL to resolve it against"}
	}
	href = strings.Trim(href, " \t\r\n\f")
	if href == "" {
		return nil, &Error{Err: ErrBadLink, URL: credentials.RedactURL(from), Detail: "the link is empty"}
	}
	ref, err := url.Parse(href)
	if err != nil {
		return nil, &Error{Err: ErrBadLink, URL: credentials.RedactURL(from), Detail: causeText(err)}
	}
	u := from.ResolveReference(ref)
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &Error{Err: ErrScheme, Link: credentials.RedactURL(u), URL: credentials.RedactURL(from)}
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, &Error{Err: ErrBadLink, Link: credentials.RedactURL(u), URL: credentials.RedactURL(from), Detail: "it names no host"}
	}
	if p.CanonicalHost != "" {
		u.Scheme = "https"
		u.Host = strings.ToLower(p.CanonicalHost)
		return u, nil
	}
	allowed := p.AllowedHosts
	if len(allowed) == 0 {
		allowed = []string{from.Host}
	}
	if !hostAllowed(u, allowed) {
		return nil, &Error{Err: ErrCrossHost, Link: credentials.RedactURL(u), URL: credentials.RedactURL(from),
			Host: u.Host, Allowed: allowed}
	}
	if from.Scheme == "https" && u.Scheme == "http" {
		return nil, &Error{Err: ErrDowngrade, Link: credentials.RedactURL(u), URL: credentials.RedactURL(from)}
	}
	return u, nil
}

// Check applies the policy to u, a URL the walk is about to request that
// was not written as a link (the target of a redirect, reached from from):
// it refuses, with the same [*Error] causes as [Policy.Resolve], a scheme
// other than http and https, a host that is not allowed (the canonical
// host counts as allowed) and a step from https down to http. Nothing is
// rewritten: a redirect is followed as the server gave it, or not at all.
func (p Policy) Check(u, from *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &Error{Err: ErrScheme, Link: credentials.RedactURL(u), URL: credentials.RedactURL(from)}
	}
	allowed := p.AllowedHosts
	if len(allowed) == 0 {
		allowed = []string{from.Host}
	}
	if p.CanonicalHost != "" {
		allowed = append(allowed[:len(allowed):len(allowed)], p.CanonicalHost)
	}
	if !hostAllowed(u, allowed) {
		return &Error{Err: ErrCrossHost, Link: credentials.RedactURL(u), URL: credentials.RedactURL(from),
			Host: u.Host, Allowed: allowed}
	}
	if from.Scheme == "https" && u.Scheme == "http" {
		return &Error{Err: ErrDowngrade, Link: credentials.RedactURL(u), URL: credentials.RedactURL(from)}
	}
	return nil
}

// hostAllowed reports whether u's host and port match an entry exactly. A
// lookalike such as api.example.gov.evil.com is a different host; a port
// other than the scheme's default must be named in the entry.
func hostAllowed(u *url.URL, allowed []string) bool {
	host, port := strings.ToLower(u.Hostname()), effectivePort(u.Port(), u.Scheme)
	for _, a := range allowed {
		ah, ap := splitHost(a)
		if ah == host && effectivePort(ap, u.Scheme) == port {
			return true
		}
	}
	return false
}

// effectivePort returns "" for the scheme's default port, so that
// "api.example.gov" and "api.example.gov:443" name the same https origin.
func effectivePort(port, scheme string) string {
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		return ""
	}
	return port
}

// splitHost splits an allowed-host entry into lower-case host and port. It
// accepts "host", "host:port", "[v6]:port", a bare IPv6 address, and, for
// convenience, a URL.
func splitHost(entry string) (host, port string) {
	entry = strings.ToLower(strings.TrimSpace(entry))
	if strings.Contains(entry, "://") {
		if u, err := url.Parse(entry); err == nil {
			return strings.ToLower(u.Hostname()), u.Port()
		}
	}
	if strings.Count(entry, ":") > 1 && !strings.HasPrefix(entry, "[") {
		return entry, "" // a bare IPv6 address
	}
	u := url.URL{Host: entry}
	return u.Hostname(), u.Port()
}

package credentials

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// A Key is one secret and the places it may go. Exactly one of Header and
// Query names where the secret travels; Hosts lists every destination that
// may receive it.
//
// Each Hosts entry names one origin, matched exactly: a host name or IP
// literal, case-insensitive, with an optional port ("api.example.gov",
// "api.example.gov:8443", "[2001:db8::1]:443"). An entry without a port
// means the https default, 443. Subdomains, parent domains and lookalikes
// ("api.example.gov.evil.com") never match, and there are no wildcards.
//
// A bare entry, or one written "https://host", accepts only https. Plain
// http is possible for loopback hosts only (127.0.0.0/8, ::1, localhost) and
// only when the entry says so, "http://127.0.0.1:8080"; that entry accepts
// http to that origin and nothing else. An http entry for any other host is
// a configuration error.
type Key struct {
	// Header is the request header that carries the secret, such as
	// "X-Api-Key" or "Authorization" (then Value holds "Bearer ...").
	Header string
	// Query is the query parameter that carries the secret, such as
	// "api_key".
	Query string
	// Value is the secret. It never appears in an error or event.
	Value string
	// Hosts lists the origins that may receive the secret.
	Hosts []string
}

// String describes k with its Value replaced by REDACTED. Format and
// LogValue use it too, so printing a Key, or a struct holding one, with any
// verb or through log/slog never shows the secret.
func (k Key) String() string {
	v := Redacted
	if k.Value == "" {
		v = "(empty)"
	}
	var b strings.Builder
	b.WriteString("credentials.Key{")
	if k.Header != "" {
		fmt.Fprintf(&b, "Header: %q, ", k.Header)
	}
	if k.Query != "" {
		fmt.Fprintf(&b, "Query: %q, ", k.Query)
	}
	fmt.Fprintf(&b, "Value: %s, Hosts: %q}", v, k.Hosts)
	return b.String()
}

// Format prints [Key.String] whatever the verb, so that neither %#v nor %x
// reaches the Value field.
func (k Key) Format(f fmt.State, verb rune) { io.WriteString(f, k.String()) }

// LogValue keeps the secret out of log/slog output, JSON included.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// A KeyError says which field of a [Key] is wrong and why. It never quotes
// the secret.
type KeyError struct {
	// Field is the path of the offending field: "Header", "Hosts[1]", or,
	// from [NewTransport], "keys[2].Value".
	Field string
	// Problem says what is wrong with it.
	Problem string
}

func (e *KeyError) Error() string {
	return "credentials: invalid key: " + e.Field + ": " + e.Problem
}

func keyError(field, format string, args ...any) *KeyError {
	return &KeyError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Validate reports the first problem with k as a [*KeyError]: not exactly
// one of Header and Query, an empty Value or one a header cannot carry, a
// Header that is not a valid field name, no Hosts, or a Hosts entry that is
// not one origin (see [Key]).
func (k Key) Validate() error {
	_, err := k.compile()
	return err
}

// Accepts reports whether a request to u may carry the key: u's scheme, host
// and port are those of one of the Hosts entries. An invalid key accepts
// nothing.
func (k Key) Accepts(u *url.URL) bool {
	c, err := k.compile()
	if err != nil {
		return false
	}
	return c.accepts(originOf(u))
}

// compiledKey is a validated Key with its header name canonical and its
// origins parsed, ready for the transport's per-request decision.
type compiledKey struct {
	header  string // canonical header name, or ""
	query   string // query parameter name, or ""
	value   string
	origins []origin
	red     *Redactor // finds value in any form, for the checks by value
}

func (c *compiledKey) accepts(o origin) bool {
	if o.host == "" {
		return false
	}
	for _, a := range c.origins {
		if a == o {
			return true
		}
	}
	return false
}

// name returns where the key travels, for messages: header or parameter name.
func (c *compiledKey) name() string {
	if c.header != "" {
		return c.header
	}
	return c.query
}

func (k Key) compile() (*compiledKey, error) {
	switch {
	case k.Header == "" && k.Query == "":
		return nil, keyError("Header", "set exactly one of Header and Query; both are empty")
	case k.Header != "" && k.Query != "":
		return nil, keyError("Query", "set exactly one of Header and Query; both are set")
	}
	c := &compiledKey{value: k.Value}
	if k.Header != "" {
		if !validHeaderName(k.Header) {
			return nil, keyError("Header", "%q is not a valid header name", k.Header)
		}
		c.header = http.CanonicalHeaderKey(k.Header)
		if reservedHeaders[c.header] {
			return nil, keyError("Header", "%s is managed by the HTTP transport and cannot carry a key", c.header)
		}
	} else {
		if strings.ContainsFunc(k.Query, isControl) {
			return nil, keyError("Query", "the parameter name contains a control character")
		}
		c.query = k.Query
	}
	switch {
	case k.Value == "":
		return nil, keyError("Value", "empty")
	case k.Header != "" && !validHeaderValue(k.Value):
		// Name the problem, never the value.
		return nil, keyError("Value", "contains a character a header value cannot carry (a control character, or space at either end)")
	}
	if len(k.Hosts) == 0 {
		return nil, keyError("Hosts", "empty; list every host that may receive the key")
	}
	c.origins = make([]origin, 0, len(k.Hosts))
	for i, h := range k.Hosts {
		o, err := parseOrigin(h)
		if err != nil {
			return nil, keyError("Hosts["+strconv.Itoa(i)+"]", "%s", err)
		}
		c.origins = append(c.origins, o)
	}
	return c, nil
}

// reservedHeaders frame the message or route it; a value set there is
// overwritten or misread by the HTTP layer.
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true,
	"Connection": true, "Te": true, "Trailer": true, "Upgrade": true,
}

// An origin is the scheme, host and port a request goes to. The host is lower
// case (IP literals in canonical form, without brackets) and the port is
// explicit, so two spellings of one destination compare equal.
type origin struct {
	scheme, host, port string
}

// originOf returns the destination of a request to u. A URL without a host,
// or with a scheme other than http and https, gives an origin with an empty
// host, which no key accepts.
func originOf(u *url.URL) origin {
	if u == nil {
		return origin{}
	}
	scheme := strings.ToLower(u.Scheme)
	var def string
	switch scheme {
	case "https":
		def = "443"
	case "http":
		def = "80"
	default:
		return origin{scheme: scheme}
	}
	port := u.Port()
	if port == "" {
		port = def
	}
	return origin{scheme: scheme, host: canonicalHost(u.Hostname()), port: port}
}

// canonicalHost lower-cases a host name and writes an IP literal in its
// canonical form. Any other text is kept, so it matches only itself.
func canonicalHost(h string) string {
	if a, err := netip.ParseAddr(h); err == nil && a.Zone() == "" {
		return a.String()
	}
	return strings.ToLower(h)
}

// parseOrigin reads one Hosts entry: [scheme "://"] host [":" port].
func parseOrigin(entry string) (origin, error) {
	scheme, rest := "https", entry
	if s, r, ok := strings.Cut(entry, "://"); ok {
		scheme, rest = strings.ToLower(s), r
		if scheme != "https" && scheme != "http" {
			return origin{}, fmt.Errorf("scheme %q: use https, or http for a loopback host", s)
		}
	}
	if err := checkOriginText(entry, rest); err != nil {
		return origin{}, err
	}
	host, port, err := splitOrigin(entry, rest)
	if err != nil {
		return origin{}, err
	}
	if port, err = originPort(entry, port, scheme); err != nil {
		return origin{}, err
	}
	if host, err = originHost(entry, host); err != nil {
		return origin{}, err
	}
	if scheme == "http" && !isLoopback(host) {
		return origin{}, fmt.Errorf("%q: plain http is allowed only for loopback hosts (127.0.0.0/8, ::1, localhost); use https", entry)
	}
	return origin{scheme: scheme, host: host, port: port}, nil
}

// checkOriginText refuses an entry whose host part rest holds anything but
// a host and a port.
func checkOriginText(entry, rest string) error {
	switch {
	case rest == "":
		return fmt.Errorf("%q names no host", entry)
	case strings.ContainsAny(rest, "/?#"):
		return fmt.Errorf("%q has a path, query or fragment; give only a host and optional port", entry)
	case strings.Contains(rest, "@"):
		return fmt.Errorf("%q has userinfo; give only a host and optional port", entry)
	case strings.Contains(rest, "*"):
		return fmt.Errorf("%q: wildcards are not supported; list each host", entry)
	case strings.ContainsFunc(rest, func(r rune) bool { return r <= ' ' || r >= 0x7f }):
		return fmt.Errorf("%q contains a space, a control character or non-ASCII text; write a host name in its ASCII (punycode) form", entry)
	}
	return nil
}

// splitOrigin splits rest into a host and a port ("" when none is given),
// reading an IPv6 address bracketed or bare.
func splitOrigin(entry, rest string) (host, port string, err error) {
	switch {
	case strings.HasPrefix(rest, "["):
		return splitBracketed(entry, rest)
	case strings.Count(rest, ":") > 1:
		// A bare IPv6 address: it cannot also carry a port.
		if _, err := netip.ParseAddr(rest); err != nil {
			return "", "", fmt.Errorf("%q is neither host:port nor an IPv6 address; write IPv6 with a port as [addr]:port", entry)
		}
		return rest, "", nil
	}
	host, port, ok := strings.Cut(rest, ":")
	if ok && port == "" {
		return "", "", fmt.Errorf("%q: empty port", entry)
	}
	return host, port, nil
}

// splitBracketed reads "[" IPv6 "]" [":" port].
func splitBracketed(entry, rest string) (host, port string, err error) {
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return "", "", fmt.Errorf("%q: missing ']' after an IPv6 address", entry)
	}
	host = rest[1:end]
	switch after := rest[end+1:]; {
	case after == "":
	case after[0] == ':':
		port = after[1:]
		if port == "" {
			return "", "", fmt.Errorf("%q: empty port", entry)
		}
	default:
		return "", "", fmt.Errorf("%q: unexpected text after the IPv6 address", entry)
	}
	if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
		return "", "", fmt.Errorf("%q: %q is not an IPv6 address", entry, host)
	}
	return host, port, nil
}

// originPort checks a given port, or returns the scheme's.
func originPort(entry, port, scheme string) (string, error) {
	switch {
	case port != "":
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+' {
			return "", fmt.Errorf("%q: port %q is not a number from 1 to 65535", entry, port)
		}
		return port, nil
	case scheme == "https":
		return "443", nil
	}
	return "80", nil
}

// originHost returns host in its one spelling: an address in its canonical
// form, a name in lower case.
func originHost(entry, host string) (string, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%q: IPv6 zones are not supported", entry)
		}
		if a.IsUnspecified() || a.IsMulticast() {
			return "", fmt.Errorf("%q is not the address of one host", entry)
		}
		return a.String(), nil
	}
	if err := checkHostName(host); err != nil {
		return "", fmt.Errorf("%q: %v", entry, err)
	}
	return strings.ToLower(host), nil
}

// checkHostName accepts a DNS name of letters, digits, '-' and '_' in
// non-empty dot-separated labels. A trailing dot is refused: requests name
// hosts without one, and a second spelling of one host is a second thing
// to match.
func checkHostName(h string) error {
	if h == "" {
		return fmt.Errorf("empty host")
	}
	if len(h) > 253 {
		return fmt.Errorf("host name longer than 253 bytes")
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" {
			return fmt.Errorf("host name has an empty label (a leading, trailing or doubled dot)")
		}
		if len(label) > 63 {
			return fmt.Errorf("host name label longer than 63 bytes")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("host name contains %q", c)
			}
		}
	}
	return nil
}

// isLoopback reports whether a canonical host is on the loopback interface
// by definition, without asking a resolver: 127.0.0.0/8, ::1, localhost.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// validHeaderValue reports whether v can be sent as a field value unchanged:
// no control characters other than tab, and no white space at either end
// (which the wire format trims, so the server would see another secret).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return v == strings.Trim(v, " \t")
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

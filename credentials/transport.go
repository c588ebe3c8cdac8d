package credentials

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ambientHeaders carry credentials the caller set without a [Key]. They may
// stay on a redirect to the original origin and nowhere else.
var ambientHeaders = [...]string{"Authorization", "Proxy-Authorization", "Cookie"}

// maxChain bounds the walk back to a redirect chain's first request. A client
// stops long before (net/http at 10 hops); a longer chain is treated as
// having left its origin.
const maxChain = 100

// NewTransport returns a RoundTripper that decides, for every request it
// sends, which keys go with it. A nil next means [http.DefaultTransport].
//
// A key is attached, replacing any value already there, when the request's
// destination is one the key accepts ([Key.Accepts]). Everywhere else every
// header and query parameter that any of the keys uses is removed, matching
// names without regard to case, including a value the caller set by hand.
// On a redirect hop whose scheme, host or port differs from the first
// request's, Authorization, Proxy-Authorization and Cookie are removed as
// well. Because the decision is taken per request, it holds on every
// redirect hop and on every next-page link, whoever wrote the URL.
//
// The caller's request is never modified: a request that needs a change is
// copied, and a response is returned with Request set to the caller's
// request, so code that reports resp.Request.URL never sees a key.
//
// An error from next whose text holds a key's value, as when a server
// echoes the request into a malformed response and net/http quotes it, is
// returned with the value replaced by REDACTED; errors.Is and errors.As
// still reach the original error.
//
// The keys are copied and validated here; if one is invalid (see [Key.Validate]) or two put
// the same header or parameter to the same origin, every RoundTrip returns
// that [*KeyError] without sending anything.
func NewTransport(next http.RoundTripper, keys ...Key) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	t := &transport{next: next}
	compiled, err := compileKeys(keys)
	if err != nil {
		t.err = err
		return t
	}
	values := make([]string, 0, len(compiled))
	for _, k := range compiled {
		values = append(values, k.value)
		k.red = NewRedactor(k.value)
		t.keys = append(t.keys, k)
		slots, name := &t.queries, k.query
		if k.header != "" {
			slots, name = &t.headers, k.header
		}
		s := findSlot(slots, name)
		s.keys = append(s.keys, k)
	}
	t.red = NewRedactor(values...)
	return t
}

var _ http.RoundTripper = (*transport)(nil)

type transport struct {
	next    http.RoundTripper
	err     error          // configuration error, returned by every RoundTrip
	headers []slot         // one per distinct header name the keys use
	queries []slot         // one per distinct query parameter name
	keys    []*compiledKey // every key, for the checks by value
	red     *Redactor      // every key value, for scrub
}

// A slot is one header or parameter name and the keys that travel in it; at
// most one of them accepts any given origin.
type slot struct {
	name string
	keys []*compiledKey
}

// want returns the value the slot must carry to o, if a key accepts o.
func (s *slot) want(o origin) (string, bool) {
	for _, k := range s.keys {
		if k.accepts(o) {
			return k.value, true
		}
	}
	return "", false
}

// findSlot returns the slot named name in *slots, ignoring case, adding it
// if needed.
func findSlot(slots *[]slot, name string) *slot {
	for i := range *slots {
		if strings.EqualFold((*slots)[i].name, name) {
			return &(*slots)[i]
		}
	}
	*slots = append(*slots, slot{name: name})
	return &(*slots)[len(*slots)-1]
}

// ValidateKeys reports the error [NewTransport] would return from every
// RoundTrip for keys, so that a configuration can be refused before any
// request: the first invalid key, or two keys that put the same header or
// parameter to the same origin, as a [*KeyError] whose Field starts with
// "keys[i]".
func ValidateKeys(keys ...Key) error {
	_, err := compileKeys(keys)
	return err
}

// compileKeys validates each key and then the set: two keys may share a
// header or parameter name only if no origin accepts both, or one of them
// would silently win.
func compileKeys(keys []Key) ([]*compiledKey, error) {
	out := make([]*compiledKey, len(keys))
	for i, k := range keys {
		c, err := k.compile()
		if err != nil {
			ke := *err.(*KeyError)
			ke.Field = "keys[" + strconv.Itoa(i) + "]." + ke.Field
			return nil, &ke
		}
		for j, prev := range out[:i] {
			if !strings.EqualFold(prev.header, c.header) || !strings.EqualFold(prev.query, c.query) {
				continue
			}
			for n, o := range c.origins {
				if prev.accepts(o) {
					return nil, &KeyError{
						Field:   fmt.Sprintf("keys[%d].Hosts[%d]", i, n),
						Problem: fmt.Sprintf("%s://%s already receives %s from keys[%d]", o.scheme, hostPort(o), c.name(), j),
					}
				}
			}
		}
		out[i] = c
	}
	return out, nil
}

func hostPort(o origin) string {
	if strings.Contains(o.host, ":") {
		return "[" + o.host + "]:" + o.port
	}
	return o.host + ":" + o.port
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.err != nil {
		closeBody(req)
		return nil, t.err
	}
	if req.URL == nil {
		return t.next.RoundTrip(req) // it reports the missing URL
	}
	if len(t.keys) == 0 && req.Response == nil && req.URL.User == nil {
		// No key and a first hop: nothing to attach, withhold or find, and
		// hand-set credentials are scoped only on hops that follow.
		resp, err := t.next.RoundTrip(req)
		if resp != nil {
			resp.Request = req
		}
		return resp, err
	}
	dest := originOf(req.URL)
	foreign := false
	if req.Response != nil {
		first := originalRequest(req)
		foreign = first == nil || dest != originOf(first.URL)
		if foreign {
			// The credentials set by hand on the first request are scoped to
			// its origin like a key: found by value wherever a server echoed
			// them, on this hop.
			t = t.withHandSet(first)
		}
	}
	// A key in the path or the host cannot be taken out without sending
	// another request than the one asked for: refuse it.
	for _, part := range [...]string{req.URL.Host, req.Host, req.URL.EscapedPath(), req.URL.Opaque} {
		if t.leaks(part, dest) {
			closeBody(req)
			return nil, &LeakError{URL: t.red.URL(req.URL), Where: "the URL's host or path"}
		}
	}
	resp, err := t.next.RoundTrip(t.outgoing(req, dest, foreign))
	t.settle(resp, req)
	return resp, t.scrub(err)
}

// outgoing returns the request to send to dest: req itself when nothing in
// it changes, or a copy with the keys attached or withheld in its header,
// query and userinfo, and its body guarded.
func (t *transport) outgoing(req *http.Request, dest origin, foreign bool) *http.Request {
	headerChanges := t.headerChanges(req.Header, dest, foreign)
	query, queryChanges := t.rewriteQuery(req.URL.RawQuery, dest)
	userChanges := req.URL.User != nil && t.leaks(req.URL.User.String(), dest)
	guard := req.Body != nil && req.Body != http.NoBody && t.withholds(dest)
	if !headerChanges && !queryChanges && !userChanges && !guard {
		return req
	}
	r := new(http.Request)
	*r = *req
	if headerChanges {
		r.Header = t.rewriteHeader(req.Header, dest, foreign)
	}
	if queryChanges || userChanges {
		u := *req.URL
		if queryChanges {
			u.RawQuery = query
			u.ForceQuery = false
		}
		if userChanges {
			u.User = nil
		}
		r.URL = &u
	}
	if guard {
		t.guardBody(r, req, dest)
	}
	return r
}

// guardBody makes r's body, and every copy net/http takes through GetBody
// to re-send it on a new connection, a body that withholds the keys dest
// must not receive.
func (t *transport) guardBody(r, req *http.Request, dest origin) {
	r.Body = &guardedBody{body: req.Body, t: t, dest: dest}
	if req.GetBody != nil {
		r.GetBody = func() (io.ReadCloser, error) {
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			return &guardedBody{body: b, t: t, dest: dest}, nil
		}
	}
}

// settle makes resp.Request the request the transport was given, whatever
// the layers below did with it (a copy made here, or a clone made by a
// layer a caller put below), so code that reports resp.Request.URL never
// sees the key this transport attached. When that URL itself carries a key
// (a next link or a Location that echoed it), resp.Request is a copy of the
// request with those parameters and its userinfo removed.
func (t *transport) settle(resp *http.Response, req *http.Request) {
	if resp == nil {
		return
	}
	resp.Request = req
	if u := t.keyFree(req.URL); u != req.URL {
		r := new(http.Request)
		*r = *req
		r.URL = u
		resp.Request = r
	}
}

// keyFree returns u without its userinfo and without every parameter that
// a key uses or whose value holds a key, or u itself when it has none.
func (t *transport) keyFree(u *url.URL) *url.URL {
	return keyFree(u, func(p string) bool { return t.isKeyParam(p) || t.red.Contains(p) || t.red.Contains(unescapeParam(p)) })
}

// filterQuery returns the raw query q without the parameters drop reports,
// keeping the others' order, encoding and separators.
func filterQuery(q string, drop func(string) bool) string {
	var b strings.Builder
	writeKept(&b, q, drop)
	return b.String()
}

// writeKept writes to b the parameters of the raw query q that drop does
// not report, keeping their order, encoding and separators, and reports
// whether it wrote any.
func writeKept(b *strings.Builder, q string, drop func(string) bool) bool {
	first := true
	for i := 0; q != "" && i <= len(q); {
		end := paramEnd(q, i)
		if p := q[i:end]; !drop(p) {
			if !first {
				b.WriteByte(q[i-1]) // the separator that preceded it
			}
			b.WriteString(p)
			first = false
		}
		i = end + 1
	}
	return !first
}

// unescapeParam returns the raw parameter p decoded, or p when it needs no
// decoding or does not decode.
func unescapeParam(p string) string {
	if !strings.ContainsAny(p, "%+") {
		return p
	}
	d, err := url.QueryUnescape(p)
	if err != nil {
		return p
	}
	return d
}

// leaks reports whether s holds, in any form a [Redactor] looks for, the
// value of a key that does not accept dest.
func (t *transport) leaks(s string, dest origin) bool {
	if s == "" {
		return false
	}
	for _, k := range t.keys {
		if !k.accepts(dest) && k.red.Contains(s) {
			return true
		}
	}
	return false
}

// withholds reports whether some key does not accept dest.
func (t *transport) withholds(dest origin) bool {
	for _, k := range t.keys {
		if !k.accepts(dest) {
			return true
		}
	}
	return false
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// scrub returns err with every key value in its text replaced by REDACTED,
// or err itself when its text holds none. Lower layers quote what a server
// sent (a malformed header, a status line), and a server may echo the key.
func (t *transport) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := t.red.String(msg); red != msg {
		return &scrubbedError{err: err, text: red}
	}
	return err
}

// scrubbedError is an error whose text had a key value removed. It unwraps
// to the original, so that its type and causes can still be matched.
type scrubbedError struct {
	err  error
	text string
}

func (e *scrubbedError) Error() string { return e.text }
func (e *scrubbedError) Unwrap() error { return e.err }

// CloseIdleConnections lets [http.Client.CloseIdleConnections] reach the
// wrapped transport.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// originalRequest returns the first request of req's redirect chain, or
// nil if the chain is too long to trust.
func originalRequest(req *http.Request) *http.Request {
	r := req
	for range maxChain {
		if r.Response == nil || r.Response.Request == nil {
			return r
		}
		r = r.Response.Request
	}
	return nil
}

// withHandSet returns t with the values of the credential headers set by
// hand on first (see isAmbient; Referer aside) added as keys that no origin
// accepts, or t itself when there are none. An Authorization value counts
// whole, by its credentials after the scheme, and for Basic by its
// password too.
func (t *transport) withHandSet(first *http.Request) *transport {
	if first == nil {
		return t
	}
	var values []string
	for name, vv := range first.Header {
		if !isAmbient(name) || strings.EqualFold(name, "Referer") {
			continue
		}
		for _, v := range vv {
			values = append(values, handSetSecrets(v)...)
		}
	}
	if len(values) == 0 {
		return t
	}
	c := *t
	c.keys = slices.Clone(t.keys)
	for _, v := range values {
		c.keys = append(c.keys, &compiledKey{value: v, red: NewRedactor(v)})
	}
	c.red = t.red.With(values...)
	return &c
}

// minHandSet is the shortest hand-set credential looked for by value; a
// shorter one would match ordinary text.
const minHandSet = 6

// handSetSecrets returns the parts of a credential header's value that are
// secret: the value, what follows an auth scheme, and a Basic password.
func handSetSecrets(v string) []string {
	var out []string
	add := func(s string) {
		if len(s) >= minHandSet {
			out = append(out, s)
		}
	}
	add(v)
	if scheme, cred, ok := strings.Cut(v, " "); ok {
		cred = strings.TrimSpace(cred)
		add(cred)
		if strings.EqualFold(scheme, "Basic") {
			if raw, err := base64.StdEncoding.DecodeString(cred); err == nil {
				if _, pass, ok := strings.Cut(string(raw), ":"); ok {
					add(pass)
				}
			}
		}
	}
	return out
}

// headerSlot returns the slot whose name matches the header name, if any.
func (t *transport) headerSlot(name string) *slot {
	for i := range t.headers {
		if strings.EqualFold(t.headers[i].name, name) {
			return &t.headers[i]
		}
	}
	return nil
}

// isAmbient reports whether a header the caller set carries a credential
// that may go only to the first request's origin: Authorization,
// Proxy-Authorization, Cookie, any name [IsCredentialName] recognises
// (X-Api-Key, X-Auth-Token, ...), and Referer, which names the previous URL,
// query and all.
func isAmbient(name string) bool {
	return strings.EqualFold(name, "Referer") || IsCredentialHeader(name)
}

// leaksIn reports whether a value of a header holds a key that does not
// accept dest.
func (t *transport) leaksIn(vv []string, dest origin) bool {
	for _, v := range vv {
		if t.leaks(v, dest) {
			return true
		}
	}
	return false
}

// headerChanges reports whether h differs from what may
// go to dest: a key header that is present where it must not be, absent or
// different where it must be, or an ambient credential on a foreign hop.
func (t *transport) headerChanges(h http.Header, dest origin, foreign bool) bool {
	for name, vv := range h {
		if s := t.headerSlot(name); s != nil {
			want, ok := s.want(dest)
			if !ok || name != s.name || len(vv) != 1 || vv[0] != want {
				return true
			}
		} else if foreign && isAmbient(name) || t.leaksIn(vv, dest) {
			return true
		}
	}
	for i := range t.headers {
		s := &t.headers[i]
		if _, ok := s.want(dest); ok {
			if _, present := h[s.name]; !present {
				return true
			}
		}
	}
	return false
}

// rewriteHeader returns a copy of h without any key header or, on a foreign
// hop, ambient credential, and with every key that accepts dest set. All
// values share one backing array, capped per header so that an append
// through the copy never writes into a neighbour.
func (t *transport) rewriteHeader(h http.Header, dest origin, foreign bool) http.Header {
	drop := func(name string, vv []string) bool {
		return t.headerSlot(name) != nil || foreign && isAmbient(name) || t.leaksIn(vv, dest)
	}
	n := len(t.headers)
	for name, vv := range h {
		if !drop(name, vv) {
			n += len(vv)
		}
	}
	out := make(http.Header, len(h)+len(t.headers))
	vals := make([]string, 0, n)
	for name, vv := range h {
		switch {
		case drop(name, vv):
		case vv == nil:
			out[name] = nil // keeps its meaning: suppress a default header
		default:
			vals = append(vals, vv...)
			out[name] = vals[len(vals)-len(vv) : len(vals) : len(vals)]
		}
	}
	for i := range t.headers {
		s := &t.headers[i]
		if want, ok := s.want(dest); ok {
			vals = append(vals, want)
			out[s.name] = vals[len(vals)-1 : len(vals) : len(vals)]
		}
	}
	return out
}

// isKeyParam reports whether the raw parameter p is one a key uses.
func (t *transport) isKeyParam(p string) bool {
	raw, _, _ := strings.Cut(p, "=")
	name, ok := decodeName(raw)
	if !ok {
		return false
	}
	for i := range t.queries {
		if strings.EqualFold(t.queries[i].name, name) {
			return true
		}
	}
	return false
}

// rewriteQuery returns the raw query that may go to dest: every key
// parameter removed, then those of the keys that accept dest appended. The
// other parameters keep their order, encoding and separators.
func (t *transport) rewriteQuery(raw string, dest origin) (string, bool) {
	if len(t.keys) == 0 {
		return raw, false
	}
	due := false
	for i := range t.queries {
		if _, ok := t.queries[i].want(dest); ok {
			due = true
			break
		}
	}
	drop := func(p string) bool {
		return t.isKeyParam(p) || t.leaks(p, dest) || strings.ContainsAny(p, "%+") && t.leaks(unescapeParam(p), dest)
	}
	present := false
	for i := 0; i < len(raw); {
		end := paramEnd(raw, i)
		if drop(raw[i:end]) {
			present = true
			break
		}
		i = end + 1
	}
	if !due && !present {
		return raw, false
	}

	var b strings.Builder
	b.Grow(len(raw) + 64)
	first := !writeKept(&b, raw, drop)
	for i := range t.queries {
		s := &t.queries[i]
		if want, ok := s.want(dest); ok {
			if !first {
				b.WriteByte('&')
			}
			b.WriteString(url.QueryEscape(s.name))
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(want))
			first = false
		}
	}
	out := b.String()
	return out, out != raw
}

// A LeakError is a request refused because it would carry a key to an
// origin that does not accept it, in a place the key cannot be taken out of
// without sending another request than the one asked for: the URL's host
// or path, or the body (as when a redirect re-sends a body that holds the
// key to another host). Nothing of the refused request was sent, or, for a
// body, nothing from the key on.
type LeakError struct {
	URL   string // the request's URL, redacted
	Where string // "the URL's host or path", "the body"
}

func (e *LeakError) Error() string {
	return "credentials: refusing to send a key in " + e.Where + " of a request to " + e.URL + ", an origin that does not accept it"
}

// guardedBody is the body of a request to an origin that some key does not
// accept. It hands out the bytes of the body it wraps but keeps back enough
// of the end of what it read to see a key split between two reads, and
// fails with a [*LeakError] before any byte of a key is handed out.
type guardedBody struct {
	body    io.ReadCloser
	t       *transport
	dest    origin
	pending []byte // read, not yet handed out
	err     error  // the wrapped body's error, once it returned one
}

func (g *guardedBody) Read(p []byte) (int, error) {
	hold := 0
	for _, k := range g.t.keys {
		if !k.accepts(g.dest) {
			hold = max(hold, k.red.longest()-1)
		}
	}
	for g.err == nil && len(g.pending) <= hold {
		buf := make([]byte, max(len(p), 512))
		n, err := g.body.Read(buf)
		g.pending = append(g.pending, buf[:n]...)
		g.err = err
		if n > 0 && g.t.leaks(string(g.pending), g.dest) {
			g.err = &LeakError{URL: g.t.red.URL(&url.URL{Scheme: g.dest.scheme, Host: hostPort(g.dest)}), Where: "the body"}
			g.pending = nil
			return 0, g.err
		}
	}
	if g.err != nil && g.err != io.EOF {
		if _, ok := g.err.(*LeakError); ok || len(g.pending) == 0 {
			return 0, g.err
		}
	}
	ready := len(g.pending)
	if g.err == nil {
		ready -= hold
	}
	n := copy(p, g.pending[:ready])
	g.pending = g.pending[n:]
	if n == 0 && g.err != nil {
		return 0, g.err
	}
	return n, nil
}

func (g *guardedBody) Close() error { return g.body.Close() }

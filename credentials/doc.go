// Package credentials decides where an API key may go and keeps it
// everywhere else.
//
// A [Key] names the header or query parameter that carries a secret and the
// exact origins that accept it: a host, matched case-insensitively but
// otherwise exactly, on port 443 over https unless the entry names another
// port. A lookalike such as api.example.gov.evil.com, a subdomain and a
// parent domain are all other hosts. Plain http is possible only for a
// loopback host whose entry is written with an explicit http:// prefix, for
// tests and local servers. [Key.Validate] reports a wrong field as a
// [*KeyError]; [Key.Accepts] answers whether one destination qualifies.
//
// [NewTransport] wraps a RoundTripper and takes the decision on every request
// it sends. A client following a redirect, and a page walk following a
// next-page link, both come back through the transport with a new URL, so
// the key is attached only where a Key accepts the destination and is
// stripped, with any value the caller set by hand under the same name,
// everywhere else. When a redirect leaves the first request's origin
// (another host or port, or https downgraded to http), Authorization,
// Proxy-Authorization, Cookie, Referer and every header [IsCredentialName]
// recognises are stripped too: a credential set by hand is scoped to the
// origin it was set for. A key that reaches a request another way (a
// server echoed it into a next link or a Location, a Referer quotes it) is
// found by value: to an origin that does not accept it, every header and
// query parameter holding it is removed, a body holding it fails to send
// before the key does, and a path or host holding it is refused with a
// [*LeakError]. The caller's request is never modified, and resp.Request
// never shows a key.
//
// No text that steady produces may carry a secret. [RedactURL] hides
// userinfo and the value of every parameter whose name looks like a
// credential ([IsCredentialName]); a [Redactor], made once from a client's
// secrets, hides the values themselves wherever they are, escaped or in
// base64, and [Escape] neutralises the control characters of text a server
// supplied. Every error, event, log line and file steady writes goes
// through them. APIs that pass free-form query parameters through refuse
// credential-shaped names with [CheckQuery], whose [*CredentialParamError]
// points the caller at a Key, so keys are passed the one safe way.
package credentials

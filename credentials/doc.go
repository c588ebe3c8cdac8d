// Package credentials decides where an API key may go and keeps it
// everywhere else.
//
// A [Key] names the header or query parameter that carries a secret and the
// exact hosts that accept it. [NewTransport] wraps a RoundTripper and decides
// on every request, so on every redirect hop and every next-page link,
// whether the destination qualifies: an exact host match over https (loopback
// over plain http only when the key says so). Where it does not, the key and
// anything that looks like a credential is removed before the request leaves.
//
// No text that steady produces may carry a secret: every URL put in an error,
// an event or a log goes through [RedactURL], and free-form query parameters
// whose names look like secrets ([IsCredentialName]) are refused, so keys are
// passed the one safe way.
package credentials

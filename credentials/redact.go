package credentials

import (
	"net/url"
	"strings"
)

// Redacted replaces every secret in text that steady produces.
const Redacted = "REDACTED"

// credentialNames are the separator-free, lower-case parameter names that
// carry secrets. Cursor-like names (page_token, next_token) are deliberately
// absent: they are pagination state, not credentials.
var credentialNames = map[string]bool{
	"apikey": true, "xapikey": true, "key": true, "apitoken": true,
	"token": true, "accesstoken": true, "refreshtoken": true, "idtoken": true,
	"authtoken": true, "xauthtoken": true, "sessiontoken": true, "bearertoken": true,
	"auth": true, "authorization": true, "password": true, "passwd": true, "pwd": true,
	"secret": true, "clientsecret": true, "apisecret": true, "secretkey": true,
	"privatekey": true, "accesskey": true, "subscriptionkey": true,
	"signature": true, "sig": true, "credential": true, "credentials": true,
}

// IsCredentialName reports whether a header or query parameter name looks like
// it carries a secret: api_key, apikey, api-key, key standing alone, token,
// access_token, auth, authorization, password, passwd, secret, client_secret,
// signature, sig, x-api-key and their kin, ignoring case and the separators
// '_', '-', '.' and ' '.
func IsCredentialName(name string) bool {
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return credentialNames[b.String()]
}

// RedactURL returns u as a string with its userinfo and the value of every
// credential-looking query parameter replaced by REDACTED. The order and
// encoding of the other parameters are kept. A nil URL gives "".
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.User != nil {
		c.User = url.User(Redacted)
	}
	c.RawQuery = redactQuery(c.RawQuery)
	c.ForceQuery = c.ForceQuery && c.RawQuery == ""
	return c.String()
}

// RedactURLString parses s and redacts it; text that does not parse as a URL
// is returned as a fixed placeholder rather than risk echoing a secret.
func RedactURLString(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return RedactURL(u)
}

func redactQuery(q string) string {
	if q == "" {
		return q
	}
	changed := false
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		n, err := url.QueryUnescape(name)
		if err != nil {
			n = name
		}
		if IsCredentialName(n) && (hasValue || p != "") {
			parts[i] = name + "=" + Redacted
			changed = true
		}
	}
	if !changed {
		return q
	}
	return strings.Join(parts, "&")
}

// Redact returns s with every occurrence of each non-empty secret replaced by
// REDACTED. Use it on text that may quote a value steady was given, such as an
// error from a lower layer.
func Redact(s string, secrets ...string) string {
	for _, v := range secrets {
		if v != "" {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

package credentials

import (
	"net/url"
	"strings"
)

// Redacted replaces every secret in text that steady produces.
const Redacted = "REDACTED"

// credentialNames are the separator-free, lower-case parameter names that
// carry secrets. Cursor-like names (page_token, next_token) are deliberately
// absent: they are pagination state, not credentials, and refusing them would
// break page walks.
var credentialNames = map[string]bool{
	// API keys
	"apikey": true, "xapikey": true, "key": true, "appkey": true, "userkey": true,
	"xgoogapikey": true, "subscriptionkey": true, "ocpapimsubscriptionkey": true,
	"accesskey": true, "secretkey": true, "privatekey": true,
	// tokens
	"token": true, "apitoken": true, "accesstoken": true, "refreshtoken": true,
	"idtoken": true, "authtoken": true, "xauthtoken": true, "sessiontoken": true,
	"bearertoken": true, "privatetoken": true, "securitytoken": true,
	"oauthtoken": true, "jwt": true, "sessionid": true,
	// passwords and shared secrets
	"auth": true, "authorization": true, "password": true, "passwd": true,
	"pwd": true, "passphrase": true, "secret": true, "clientsecret": true,
	"apisecret": true, "appsecret": true, "consumersecret": true,
	// signatures and signed-URL material
	"signature": true, "sig": true, "oauthsignature": true, "credential": true,
	"credentials": true, "xamzsignature": true, "xamzcredential": true,
	"xamzsecuritytoken": true,
}

// maxCredentialName is the length of the longest name in credentialNames.
const maxCredentialName = len("ocpapimsubscriptionkey")

// IsCredentialName reports whether a header or query parameter name looks like
// it carries a secret: api_key, apikey, api-key, key standing alone, token,
// access_token, auth, authorization, password, passwd, secret, client_secret,
// signature, sig, x-api-key and their kin, ignoring case and the separators
// '_', '-', '.' and ' '. Names that merely contain such a word (page_token,
// keyword, monkey) do not count.
func IsCredentialName(name string) bool {
	var buf [maxCredentialName]byte
	n := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		if n == len(buf) {
			return false
		}
		buf[n] = c
		n++
	}
	return credentialNames[string(buf[:n])]
}

// IsCredentialHeader reports whether a request header carries a credential:
// Authorization, Proxy-Authorization, Cookie, or a name [IsCredentialName]
// recognises (X-Api-Key, X-Auth-Token, Api-Key, ...). A value set by hand
// under such a name is scoped like a [Key]: the transport sends it only to
// the origin of the request it was set on, and a program that takes headers
// from its user makes it a Key for the hosts that accept it.
func IsCredentialHeader(name string) bool {
	for _, a := range ambientHeaders {
		if strings.EqualFold(a, name) {
			return true
		}
	}
	return IsCredentialName(name)
}

// RedactURL returns u as a string with its userinfo and the value of every
// credential-looking query parameter replaced by REDACTED. The fragment is
// treated the same way, since sign-in flows put tokens there
// (#access_token=...). A parameter whose name has malformed escapes is
// redacted too: what a server makes of it is unknown. The order and encoding
// of everything else are kept. A nil URL gives "".
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.User != nil {
		c.User = url.User(Redacted)
	}
	if i := strings.LastIndexByte(c.Opaque, '@'); i >= 0 {
		// "scheme:user:pass@host" parses as opaque; hide what precedes the host.
		c.Opaque = Redacted + c.Opaque[i:]
	}
	c.RawQuery = redactQuery(c.RawQuery)
	c.ForceQuery = c.ForceQuery && c.RawQuery == ""
	if c.Fragment != "" {
		raw := u.EscapedFragment()
		if red := redactQuery(raw); red != raw {
			c.RawFragment = red
			c.Fragment, _ = url.PathUnescape(red) // red came from valid escapes
		}
	}
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

// redactQuery replaces the value of every credential-looking parameter of
// the raw query q, keeping everything else byte for byte.
func redactQuery(q string) string {
	var b strings.Builder
	done := 0 // q[:done] is already in b
	for i := 0; i < len(q); {
		end := paramEnd(q, i)
		raw, _, hasValue := strings.Cut(q[i:end], "=")
		if hasValue {
			name, ok := decodeName(raw)
			if !ok || IsCredentialName(name) {
				if done == 0 {
					b.Grow(len(q))
				}
				b.WriteString(q[done:i])
				b.WriteString(raw)
				b.WriteString("=" + Redacted)
				done = end
			}
		}
		i = end + 1
	}
	if done == 0 {
		return q
	}
	b.WriteString(q[done:])
	return b.String()
}

// Redact returns s with every non-empty secret replaced by REDACTED, in
// each form a [Redactor] looks for. Use it on text that may quote a value
// steady was given, such as an error from a lower layer; code that redacts
// more than once makes one Redactor.
func Redact(s string, secrets ...string) string {
	return NewRedactor(secrets...).String(s)
}

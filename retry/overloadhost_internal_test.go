package retry

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestOverloadHostIsHostAndPort: the breaker's key of a request is its
// lower-cased host joined with its port, the scheme's default when the URL
// names none, whatever form the URL's authority takes.
func TestOverloadHostIsHostAndPort(t *testing.T) {
	for _, raw := range []string{
		"http://example.com/a", "https://example.com/a", "HTTPS://Example.COM:8443/a",
		"http://example.com:/a", "https://example.com:443/", "http://127.0.0.1:8080/x",
		"http://[::1]/", "https://[::1]:/", "http://[::1]:9000/", "http://[FE80::1%25en0]:8080/",
		"https://[2001:db8::1]/", "http://xn--bcher-kva.example/",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		port := u.Port()
		if port == "" {
			port = "80"
			if strings.EqualFold(u.Scheme, "https") {
				port = "443"
			}
		}
		want := net.JoinHostPort(strings.ToLower(u.Hostname()), port)
		if got := overloadHost(&http.Request{URL: u}); got != want {
			t.Errorf("%s: key %q, want %q", raw, got, want)
		}
	}
}

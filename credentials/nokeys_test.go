package credentials_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/steadyhttp/steady/credentials"
)

// A transport without keys sends the first request of a chain as it is
// (ADR 231), and the attacker's way around that is a redirect: a server
// that sends the caller's hand-set credentials on to another origin. On
// the same host at another port, net/http itself copies Authorization and
// Cookie, and it copies every other header (X-Api-Key, X-Auth-Token)
// whatever the host; each hop away from the first origin must carry none of
// them, and one back to it all of them.
func TestTransportWithoutKeysScopesHandSetCredentialsOnRedirects(t *testing.T) {
	t.Parallel()
	hand := map[string]string{
		"Authorization":       "Bearer hand-5et-bearer-1",
		"Proxy-Authorization": "Basic aGFuZDpwcm94eS1wYXNz",
		"Cookie":              "session=hand-5et-cookie-2",
		"X-Api-Key":           "hand-5et-key-3",
		"X-Auth-Token":        "hand-5et-token-4",
	}
	var mu sync.Mutex
	seen := map[string]http.Header{} // by path on the foreign server
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
	}))
	defer foreign.Close()
	var home *httptest.Server
	home = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same-host-other-port":
			http.Redirect(w, r, foreign.URL+"/same-host-other-port?echo="+r.Header.Get("X-Api-Key"), http.StatusFound)
		case "/other-name":
			to := strings.Replace(foreign.URL, "127.0.0.1", "localhost", 1)
			http.Redirect(w, r, to+"/other-name", http.StatusTemporaryRedirect)
		case "/round-trip":
			http.Redirect(w, r, home.URL+"/back", http.StatusFound)
		case "/back":
			for name, v := range hand {
				if got := r.Header.Get(name); got != v {
					t.Errorf("back on the first origin, %s = %q; want the caller's %q", name, got, v)
				}
			}
		}
	}))
	defer home.Close()
	client := &http.Client{Transport: credentials.NewTransport(home.Client().Transport)}
	for _, path := range []string{"/same-host-other-port", "/other-name", "/round-trip"} {
		req, err := http.NewRequest(http.MethodGet, home.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range hand {
			req.Header.Set(name, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", path, resp.StatusCode)
		}
		if strings.Contains(resp.Request.URL.RawQuery, hand["X-Api-Key"]) {
			t.Errorf("%s: resp.Request.URL %s shows the key the server echoed", path, resp.Request.URL)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, path := range []string{"/same-host-other-port", "/other-name"} {
		h, ok := seen[path]
		if !ok {
			t.Fatalf("%s: the redirect never reached the other origin", path)
		}
		for name := range hand {
			if v := h.Values(name); len(v) > 0 {
				t.Errorf("%s: the other origin received %s: %q", path, name, v)
			}
		}
		if r := h.Get("Referer"); r != "" {
			t.Errorf("%s: the other origin received Referer %q", path, r)
		}
		if u := h.Get("X-Api-Key"); u != "" || strings.Contains(strings.Join(h.Values("Referer"), ""), "hand-5et") {
			t.Errorf("%s: a hand-set value reached the other origin", path)
		}
	}
}

// Userinfo in the URL is the one thing of a first request a key-less
// transport still changes: resp.Request, which callers print, never shows
// it.
func TestTransportWithoutKeysHidesUserinfo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "me" || p != "s3cret-pass" {
			t.Errorf("the server got basic auth %q %q %v; want the URL's", u, p, ok)
		}
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, strings.Replace(srv.URL, "://", "://me:s3cret-pass@", 1)+"/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: credentials.NewTransport(srv.Client().Transport)}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.User != nil || strings.Contains(resp.Request.URL.String(), "s3cret") {
		t.Errorf("resp.Request.URL = %s; want it without userinfo", resp.Request.URL)
	}
	if req.URL.User == nil {
		t.Error("the caller's request lost its userinfo")
	}
}

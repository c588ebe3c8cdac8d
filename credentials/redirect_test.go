package credentials_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
)

// seen is what a test server received.
type seen struct {
	host, path, query, body string
	header                  http.Header
}

// recorder collects the requests test servers receive.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
}

func (rc *recorder) add(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.reqs = append(rc.reqs, seen{r.Host, r.URL.Path, r.URL.RawQuery, string(body), r.Header.Clone()})
}

// at returns the one request received for host and path.
func (rc *recorder) at(t *testing.T, host, path string) seen {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var found []seen
	for _, s := range rc.reqs {
		if s.host == host && s.path == path {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%s was received %d times, want once; all: %+v", host, path, len(found), rc.reqs)
	}
	return found[0]
}

// world is a set of test servers reachable by name: api.example.com and
// example.com (https) and evil.example.com (https) on two TLS servers, and
// api.example.com over plain http. The test certificate covers example.com
// and *.example.com, so TLS verification stays on.
type world struct {
	rec    recorder
	client *http.Client
	last   *http.Request // resp.Request of the last call
}

func newWorld(t *testing.T, keys ...credentials.Key) *world {
	t.Helper()
	w := &world{}
	redirect := func(rw http.ResponseWriter, r *http.Request) bool {
		target := r.URL.Query().Get("to")
		if target == "" {
			return false
		}
		code := http.StatusFound
		if r.URL.Path == "/307" {
			code = http.StatusTemporaryRedirect
		}
		http.Redirect(rw, r, target, code)
		return true
	}
	handler := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.rec.add(r)
		if !redirect(rw, r) {
			io.WriteString(rw, "ok")
		}
	})
	// Every request is watched: no key may reach an origin that does not
	// accept it (internal/wiretest).
	watch := wiretest.For(t)
	watch.Key(keys...)
	api := httptest.NewTLSServer(watch.Handler(handler))
	evil := httptest.NewTLSServer(watch.Handler(handler))
	plain := httptest.NewServer(watch.Handler(handler))

	addrs := map[string]string{
		"api.example.com:443":  api.Listener.Addr().String(),
		"example.com:443":      api.Listener.Addr().String(),
		"evil.example.com:443": evil.Listener.Addr().String(),
		"api.example.com:80":   plain.Listener.Addr().String(),
	}
	base := api.Client().Transport.(*http.Transport)
	tr := &http.Transport{
		TLSClientConfig: base.TLSClientConfig.Clone(),
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if a, ok := addrs[addr]; ok {
				addr = a
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	w.client = &http.Client{Transport: credentials.NewTransport(tr, keys...)}
	t.Cleanup(func() {
		w.client.CloseIdleConnections()
		api.Close()
		evil.Close()
		plain.Close()
	})
	return w
}

func (w *world) do(t *testing.T, method, u, body string, header map[string]string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != "ok" {
		t.Fatalf("%s %s: %d %q", method, u, resp.StatusCode, b)
	}
	w.last = resp.Request
}

func TestRedirectsWithRealServers(t *testing.T) {
	t.Parallel()
	hk := credentials.Key{Header: "X-Api-Key", Value: secret, Hosts: []string{"api.example.com"}}
	qk := credentials.Key{Query: "api_key", Value: secret, Hosts: []string{"api.example.com"}}
	const toEvil = "https://evil.example.com/landing"

	t.Run("key sent to the allowed host", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, hk)
		w.do(t, http.MethodGet, "https://api.example.com/x", "", nil)
		if got := w.rec.at(t, "api.example.com", "/x").header.Get("X-Api-Key"); got != secret {
			t.Errorf("X-Api-Key = %q, want the key", got)
		}
	})

	t.Run("query key not visible in resp.Request", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, qk)
		w.do(t, http.MethodGet, "https://api.example.com/x?a=1", "", nil)
		if got := w.rec.at(t, "api.example.com", "/x").query; got != "a=1&api_key="+secret {
			t.Errorf("allowed host got query %q, want the key appended", got)
		}
		if got := w.last.URL.String(); strings.Contains(got, secret) {
			t.Errorf("resp.Request.URL = %s, carries the key", got)
		}
	})

	t.Run("302 to a foreign host", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, hk)
		w.do(t, http.MethodGet, "https://api.example.com/302?to="+toEvil, "", map[string]string{
			"X-Api-Key": "hand-set", "Authorization": "Bearer caller", "Cookie": "s=1",
		})
		if got := w.rec.at(t, "api.example.com", "/302").header.Get("X-Api-Key"); got != secret {
			t.Errorf("allowed host got X-Api-Key %q, want the configured key", got)
		}
		h := w.rec.at(t, "evil.example.com", "/landing").header
		for _, name := range []string{"X-Api-Key", "Authorization", "Cookie"} {
			if v, ok := h[name]; ok {
				t.Errorf("foreign host received %s: %q", name, v)
			}
		}
	})

	t.Run("307 with a body to a foreign host", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, hk)
		w.do(t, http.MethodPost, "https://api.example.com/307?to="+toEvil, "payload", map[string]string{"X-Api-Key": "hand-set"})
		first := w.rec.at(t, "api.example.com", "/307")
		if first.body != "payload" || first.header.Get("X-Api-Key") != secret {
			t.Errorf("allowed host got body %q and X-Api-Key %q", first.body, first.header.Get("X-Api-Key"))
		}
		hop := w.rec.at(t, "evil.example.com", "/landing")
		if hop.body != "payload" {
			t.Errorf("replayed body = %q, want %q", hop.body, "payload")
		}
		if v, ok := hop.header["X-Api-Key"]; ok {
			t.Errorf("foreign host received X-Api-Key: %q", v)
		}
	})

	t.Run("downgrade to http on the same host", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, hk)
		// net/http keeps Authorization here: it compares host names only.
		w.do(t, http.MethodGet, "https://api.example.com/302?to=http://api.example.com/plain", "", map[string]string{
			"Authorization": "Bearer caller",
		})
		h := w.rec.at(t, "api.example.com", "/plain").header
		for _, name := range []string{"X-Api-Key", "Authorization"} {
			if v, ok := h[name]; ok {
				t.Errorf("plain http hop received %s: %q", name, v)
			}
		}
	})

	t.Run("redirect to a subdomain", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, hk)
		// net/http keeps Authorization from example.com to its subdomains.
		w.do(t, http.MethodGet, "https://example.com/302?to=https://api.example.com/sub", "", map[string]string{
			"Authorization": "Bearer caller",
		})
		if got := w.rec.at(t, "example.com", "/302").header.Get("X-Api-Key"); got != "" {
			t.Errorf("example.com received X-Api-Key %q; only api.example.com is listed", got)
		}
		h := w.rec.at(t, "api.example.com", "/sub").header
		if v, ok := h["Authorization"]; ok {
			t.Errorf("subdomain hop received Authorization: %q", v)
		}
		if got := h.Get("X-Api-Key"); got != secret {
			t.Errorf("listed host after the redirect got X-Api-Key %q, want the key", got)
		}
	})

	t.Run("query key echoed into a foreign Location", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, qk)
		w.do(t, http.MethodGet, "https://api.example.com/echo?x=1", "", nil)
		// The first request carries the key; a server that copies its query
		// into the next link must not hand it to another host.
		first := w.rec.at(t, "api.example.com", "/echo")
		if !strings.Contains(first.query, "api_key="+secret) {
			t.Fatalf("allowed host got query %q, want the key", first.query)
		}
		w.do(t, http.MethodGet, "https://api.example.com/302?to="+toEvil+"?"+strings.ReplaceAll(first.query, "&", "%26"), "", nil)
		if got := w.rec.at(t, "evil.example.com", "/landing").query; strings.Contains(got, secret) || got != "x=1" {
			t.Errorf("foreign host got query %q, want %q", got, "x=1")
		}
	})
}

func TestLoopbackHTTPOptIn(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := wiretest.For(t).Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rec.add(r)
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(rw, r, to, http.StatusFound)
			return
		}
		io.WriteString(rw, "ok")
	}))
	defer srv.Close()
	byIP := srv.URL // http://127.0.0.1:PORT
	// The same socket under another host name: a distinct origin.
	byName := "http://localhost:" + strings.TrimPrefix(srv.URL, "http://127.0.0.1:")

	k := credentials.Key{Header: "X-Api-Key", Value: secret, Hosts: []string{byIP}}
	wiretest.For(t).Key(k)
	client := &http.Client{Transport: credentials.NewTransport(srv.Client().Transport, k)}
	defer client.CloseIdleConnections()

	resp, err := client.Get(byIP + "/start?to=" + byName + "/other")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	host := strings.TrimPrefix(byIP, "http://")
	if got := rec.at(t, host, "/start").header.Get("X-Api-Key"); got != secret {
		t.Errorf("opted-in loopback origin got X-Api-Key %q, want the key", got)
	}
	if v, ok := rec.at(t, strings.TrimPrefix(byName, "http://"), "/other").header["X-Api-Key"]; ok {
		t.Errorf("localhost, not listed, received X-Api-Key: %q", v)
	}
}

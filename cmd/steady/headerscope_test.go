package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Every -H header off the content-negotiation list stays with the URL's
// origin: a real redirect to a second server carries none of them, while
// the negotiation headers follow. Checked on what the second server
// received.
func TestGetScopesEveryHeaderToItsOrigin(t *testing.T) {
	secrets := []string{"X-RapidAPI-Key", "X-Access-Token", "X-Auth-Key", "X-Vault-Token", "Dd-Api-Key",
		"X-Shopify-Access-Token", "Private-Token", "X-Figma-Token", "X-Goog-Api-Key", "X-Custom-Thing"}
	var mu sync.Mutex
	var seen http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		w.Write([]byte("moved body"))
	}))
	defer other.Close()
	var first http.Header
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first = r.Header.Clone()
		mu.Unlock()
		http.Redirect(w, r, other.URL+"/landed", http.StatusFound)
	}))
	defer origin.Close()
	args := []string{"get", "-q", origin.URL + "/start", "-H", "Accept: application/json", "-H", "Accept-Language: fr"}
	for i, name := range secrets {
		args = append(args, "-H", name+": secret-value-"+string(rune('a'+i))+"-0123456789")
	}
	code, out, errText := cli(t, args...)
	if code != exitOK || out != "moved body" {
		t.Fatalf("exit %d, %q, %s", code, out, errText)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range secrets {
		if first.Get(name) == "" {
			t.Errorf("%s did not reach its own origin", name)
		}
		if v := seen.Get(name); v != "" {
			t.Errorf("%s reached the other host: %q", name, v)
		}
	}
	for name, v := range seen {
		if strings.Contains(strings.Join(v, ","), "secret-value") {
			t.Errorf("the other host received %s: %q", name, v)
		}
	}
	if seen.Get("Accept") != "application/json" || seen.Get("Accept-Language") != "fr" {
		t.Errorf("negotiation headers did not follow: %v", seen)
	}
}

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// -H on harvest: every header off the content-negotiation list reaches the
// URL's origin on every page, and none reaches a next link on another
// origin (allowed with --allow-host), nor a redirect hop to one; the
// negotiation headers go everywhere. Checked on what each server received.
func TestHarvestHeadersStayWithTheirOrigin(t *testing.T) {
	secrets := []string{"Authorization", "X-RapidAPI-Key", "X-Vault-Token", "Dd-Api-Key", "X-Custom-Thing"}
	var mu sync.Mutex
	got := map[string][]http.Header{}
	note := func(who string, r *http.Request) {
		mu.Lock()
		got[who] = append(got[who], r.Header.Clone())
		mu.Unlock()
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		note("other", r)
		fmt.Fprint(w, `[{"id":3},{"id":4}]`)
	}))
	defer other.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		note("origin", r)
		switch r.URL.Path {
		case "/p1":
			w.Header().Set("Link", `</p2>; rel="next"`)
			fmt.Fprint(w, `[{"id":1}]`)
		case "/p2":
			// The next page is a redirect to the other origin, whose
			// page links back here.
			w.Header().Set("Link", "<"+other.URL+`/p3>; rel="next"`)
			fmt.Fprint(w, `[{"id":2}]`)
		}
	}))
	defer origin.Close()
	otherHost := strings.TrimPrefix(other.URL, "http://")
	args := []string{"harvest", "-q", "--pages", "link", "--allow-host", otherHost, origin.URL + "/p1",
		"-H", "Accept: application/geo+json", "-H", "Accept-Language: fr"}
	for _, name := range secrets {
		args = append(args, "-H", name+": secret-"+strings.ToLower(name)+"-0123456789")
	}
	code, out, errText := cli(t, args...)
	if code != exitOK || strings.Count(out, "\n") != 4 {
		t.Fatalf("exit %d, %q, %s", code, out, errText)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got["origin"]) != 2 || len(got["other"]) != 1 {
		t.Fatalf("requests: %d to the origin, %d to the other", len(got["origin"]), len(got["other"]))
	}
	for _, h := range got["origin"] {
		for _, name := range secrets {
			if !strings.Contains(h.Get(name), "secret-") {
				t.Errorf("%s did not reach its origin: %v", name, h)
			}
		}
	}
	for _, h := range append(got["origin"], got["other"]...) {
		if h.Get("Accept") != "application/geo+json" || h.Get("Accept-Language") != "fr" {
			t.Errorf("negotiation headers missing: %v", h)
		}
	}
	for name, v := range got["other"][0] {
		if strings.Contains(strings.Join(v, ","), "secret-") {
			t.Errorf("the other origin received %s: %q", name, v)
		}
	}
}

// A redirect hop from the origin to another origin carries none of them,
// and a hop back to the origin has them again.
func TestHarvestHeadersOffRedirects(t *testing.T) {
	var mu sync.Mutex
	var seen []string // "who:value"
	var origin *httptest.Server
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, "other:"+r.Header.Get("X-Thing"))
		mu.Unlock()
		http.Redirect(w, r, origin.URL+"/back", http.StatusFound)
	}))
	defer other.Close()
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, "origin"+r.URL.Path+":"+r.Header.Get("X-Thing"))
		mu.Unlock()
		if r.URL.Path == "/start" {
			http.Redirect(w, r, other.URL+"/hop", http.StatusFound)
			return
		}
		fmt.Fprint(w, `[{"id":1}]`)
	}))
	defer origin.Close()
	code, out, errText := cli(t, "harvest", "-q", "--pages", "link", "--allow-host", strings.TrimPrefix(other.URL, "http://"),
		origin.URL+"/start", "-H", "X-Thing: s3cret-value-42")
	if code != exitOK || out != "{\"id\":1}\n" {
		t.Fatalf("exit %d, %q, %s", code, out, errText)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "origin/start:s3cret-value-42 other: origin/back:s3cret-value-42"
	if strings.Join(seen, " ") != want {
		t.Errorf("hops %q, want %q", seen, want)
	}
}

// -H Range is steady's to send, and a malformed header names no value.
func TestHarvestHeaderUsage(t *testing.T) {
	for _, h := range []string{"Range: 0-9", "range-unit: items", "If-Range: x", "bad header: s3cret"} {
		code, _, errText := cli(t, "harvest", "-q", "http://127.0.0.1:1/items", "-H", h)
		if code != exitUsage || strings.Contains(errText, "s3cret") {
			t.Errorf("-H %q: exit %d, %s", h, code, errText)
		}
	}
}

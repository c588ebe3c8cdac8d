package main

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A next link that redirects to another host (as to a cloud metadata
// address) is refused like the link would be: the foreign host sees no
// request, and page 1's rows are kept.
func TestBinaryHarvestRedirectToForeignHost(t *testing.T) {
	bin := binary(t)
	var reached atomic.Int64
	metadata := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte(`[{"id":"stolen"}]`))
	}))
	defer metadata.Close()
	srv := newPageServer(t, objects(1, 2), objects(3, 4))
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			http.Redirect(w, r, metadata.URL+"/latest/meta-data/", http.StatusFound)
			return
		}
		srv.serve(w, r)
	}))
	defer redirecting.Close()
	srv.mu.Lock()
	srv.base = redirecting.URL // the links point at the redirecting front
	srv.mu.Unlock()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	cmd := exec.Command(bin, "harvest", "-q", redirecting.URL, "-o", out)
	b, _ := cmd.CombinedOutput()
	host := strings.TrimPrefix(metadata.URL, "http://")
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(string(b), "redirected") || !strings.Contains(string(b), host) {
		t.Fatalf("exit %d, %s; want 1 naming the redirect to %s", code, b, host)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the foreign host received %d requests", n)
	}
	checkExact(t, rowsOf(t, partialPath(out)), 2)
	if st, _ := loadState(statePath(out)); st == nil || !strings.HasSuffix(st.Next, "page=2") {
		t.Fatalf("state %+v; want page 2 as the resume point", st)
	}
}

// --allow-host lets a walk go on to another host, link or redirect, and the
// key still goes only to the URL's own host.
func TestHarvestAllowHost(t *testing.T) {
	var keyAtB atomic.Int64
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "" || strings.Contains(r.URL.RawQuery, "k3y") {
			keyAtB.Add(1)
		}
		w.Write([]byte(objects(3, 4)))
	}))
	defer b.Close()
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			http.Redirect(w, r, b.URL+"/last", http.StatusFound)
			return
		}
		w.Header().Set("Link", `</?page=2>; rel="next"`)
		w.Write([]byte(objects(1, 2)))
	}))
	defer a.Close()
	t.Setenv("STEADY_API_KEY", "k3y")
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := cli(t, "harvest", "-q", a.URL, "-o", out)
	bHost := strings.TrimPrefix(b.URL, "http://")
	if code != exitFailed || !strings.Contains(errText, "--allow-host "+bHost) {
		t.Fatalf("without --allow-host: exit %d, %q; want 1 and the hint", code, errText)
	}
	if code, _, errText := cli(t, "harvest", "-q", a.URL, "-o", out, "--force", "--allow-host", bHost); code != exitOK {
		t.Fatalf("with --allow-host: %d %q", code, errText)
	}
	checkExact(t, rowsOf(t, out), 4)
	if n := keyAtB.Load(); n != 0 {
		t.Fatalf("the allowed other host received the key %d times", n)
	}
	if code, _, errText := cli(t, "harvest", "-q", a.URL, "--allow-host", "evil.example/x"); code != exitUsage {
		t.Fatalf("bad --allow-host: %d %q", code, errText)
	}
}

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

package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// A server that puts the API key in the path of its next links (escaped,
// as some do): the state file holds no form of the key, yet --resume
// continues at the exact page, with the key back in its path, and every
// row comes once. A resume without the key refuses, naming none.
func TestHarvestStateSealsAKeyInThePath(t *testing.T) {
	const key = "pk/9f+e2=live:77a1"
	var fail atomic.Bool
	fail.Store(true)
	var srv *httptest.Server
	var resumedWithKey atomic.Bool
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 1
		if rest, ok := strings.CutPrefix(r.URL.Path, "/v1/"+key+"/page/"); ok {
			n, _ = strconv.Atoi(rest)
			if n == 3 && !fail.Load() {
				resumedWithKey.Store(true)
			}
		} else if r.URL.Path != "/v1/items" {
			http.Error(w, "no such page "+r.URL.Path, http.StatusNotFound)
			return
		}
		if n == 3 && fail.Load() {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Total-Count", "100")
		if n < 5 {
			w.Header().Set("Link", fmt.Sprintf(`<%s/v1/%s/page/%d>; rel="next"`, srv.URL, strings.ReplaceAll(url.PathEscape(key), "%2F", "%2f"), n+1))
		}
		io.WriteString(w, objects((n-1)*20+1, n*20))
	}))
	defer srv.Close()
	t.Setenv("STEADY_API_KEY", key)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	args := []string{"harvest", "-q", "--pages", "link", srv.URL + "/v1/items", "-o", out}
	if code, _, errText := cli(t, args...); code != exitFailed {
		t.Fatalf("first run: exit %d, %s", code, errText)
	}
	b, err := os.ReadFile(statePath(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{key, url.PathEscape(key), url.QueryEscape(key), "9f", "77a1"} {
		if strings.Contains(strings.ToLower(string(b)), strings.ToLower(form)) {
			t.Errorf("the state holds %q:\n%s", form, b)
		}
	}
	fail.Store(false)
	t.Setenv("STEADY_API_KEY", "")
	if code, _, errText := cli(t, append(args, "--resume")...); code != exitUsage || strings.Contains(errText, "77a1") {
		t.Fatalf("resume without the key: exit %d, %s", code, errText)
	}
	t.Setenv("STEADY_API_KEY", key)
	if code, _, errText := cli(t, append(args, "--resume")...); code != exitOK {
		t.Fatalf("resume: exit %d, %s", code, errText)
	}
	checkExact(t, rowsOf(t, out), 100)
	if !resumedWithKey.Load() {
		t.Error("the resume did not ask for page 3 at the path the server gave")
	}
}

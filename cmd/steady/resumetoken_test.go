package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// tokenPages serves pages of per rows each, linked by next links whose
// continuation is a parameter named param, announcing total rows; page
// failAt answers 429 with a long Retry-After while fail is set.
func tokenPages(t *testing.T, param string, pages, per int, total int, failAt int, fail *atomic.Bool) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 1
		if v := r.URL.Query().Get(param); v != "" {
			n, _ = strconv.Atoi(strings.TrimPrefix(v, "c"))
		}
		if n == failAt && fail.Load() {
			w.Header().Set("Retry-After", "7200")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("X-Total-Count", strconv.Itoa(total))
		if n < pages {
			w.Header().Set("Link", fmt.Sprintf(`<%s/items?%s=c%d>; rel="next"`, srv.URL, param, n+1))
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, objects((n-1)*per+1, n*per))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The state keeps the exact next URL the server gave: a continuation in a
// parameter named like a credential (token, key, sig) resumes at the right
// page, with every row once.
func TestHarvestResumesCredentialNamedContinuation(t *testing.T) {
	for _, param := range []string{"token", "key", "sig"} {
		t.Run(param, func(t *testing.T) {
			var fail atomic.Bool
			fail.Store(true)
			srv := tokenPages(t, param, 5, 20, 100, 3, &fail)
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items", "-o", out); code != exitRateLimited {
				t.Fatalf("first run: exit %d, %s", code, errText)
			}
			st, _ := loadState(statePath(out))
			if st == nil || !strings.HasSuffix(st.Next, "?"+param+"=c3") {
				t.Fatalf("state %+v; want the server's next link to page 3", st)
			}
			fail.Store(false)
			if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items", "-o", out, "--resume"); code != exitOK {
				t.Fatalf("resume: exit %d, %s", code, errText)
			}
			checkExact(t, rowsOf(t, out), 100)
		})
	}
}

// More rows than the server announced is an error, as fewer is: both
// numbers are named, and the output does not appear.
func TestHarvestMoreRowsThanAnnounced(t *testing.T) {
	var fail atomic.Bool
	srv := tokenPages(t, "page", 5, 28, 100, 0, &fail)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items", "-o", out)
	if code != exitFailed || !strings.Contains(errText, "100") || !strings.Contains(errText, "140") {
		t.Fatalf("exit %d, %q; want %d naming 100 and 140", code, errText, exitFailed)
	}
	if _, err := readPrivate(out); err == nil {
		t.Error("the output appeared")
	}
	code, stdout, errText := cli(t, "harvest", "-q", srv.URL+"/items")
	if code != exitFailed || strings.Count(stdout, "\n") != 140 || !strings.Contains(errText, "140") {
		t.Fatalf("to stdout: exit %d, %d rows, %q", code, strings.Count(stdout, "\n"), errText)
	}
}

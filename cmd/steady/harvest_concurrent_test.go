package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/steadyhttp/steady/steadytest"
)

// slowOffsets serves rows rows as json-server 0.17 does by _start and
// _limit, each response held back by latency, as a distant API's are.
func slowOffsets(t *testing.T, rows int, latency time.Duration) *httptest.Server {
	t.Helper()
	h, err := steadytest.NewHandler(steadytest.ServerOptions{Rows: rows, Style: steadytest.Offset})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { h.Close(); srv.Close() })
	return srv
}

// kill -9 in the middle of a harvest fetching eight offset pages at once,
// then --resume: the published file holds every row once, in order. The
// state counts only pages written in order, so pages fetched ahead and not
// yet written when the process died are fetched again.
func TestBinaryConcurrentOffsetKillAndResume(t *testing.T) {
	bin := binary(t)
	srv := slowOffsets(t, 20_000, 20*time.Millisecond)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	// 2,000 pages of 10: about five seconds, so the kill lands mid-way.
	args := []string{"harvest", "-q", "--concurrent", "8", "--pages", "offset:_start:_limit", srv.URL + "/items?_limit=10", "-o", out}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	awaitChild(t, cmd, "a state with rows", func() bool {
		st, _ := loadState(statePath(out))
		return st != nil && st.Rows >= 2000
	})
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the killed harvest published its output")
	}
	if code, _, errText := runBinary(t, nil, append(args, "--resume")...); code != exitOK {
		t.Fatalf("resume: exit %d, %s", code, errText)
	}
	checkExact(t, rowsOf(t, out), 20_000)
}

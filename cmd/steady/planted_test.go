package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sharedDir is a world-writable, sticky directory (like /tmp) in which a
// second local user, uid 65534, can plant files. It needs root to give
// files away; CI runs as root, so there the test may not skip.
func sharedDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI runs as root: the planted-file tests must run there")
		}
		t.Skip("needs root to plant files as another user (uid 65534)")
	}
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// plant writes a file as the other user would leave it.
func plant(t *testing.T, path string, data []byte, mode os.FileMode, uid int) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

const nobody = 65534

// Another local user plants FILE.partial and its record where the output
// goes: steady refuses them (exit 2) naming the file and why, and never
// continues the attacker's bytes.
func TestBinaryGetRefusesPlantedPartial(t *testing.T) {
	bin := binary(t)
	body := strings.Repeat("genuine-", 125)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Etag", `"v1"`)
		http.ServeContent(w, r, "", time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), strings.NewReader(body))
	}))
	defer srv.Close()
	cases := []struct {
		name      string
		uid, mode int
		want      string
	}{
		{"another user's", nobody, 0o644, "owned by another user (uid 65534)"},
		{"writable by others", 0, 0o666, "writable by other users (mode 0666)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := sharedDir(t)
			out := filepath.Join(dir, "data.bin")
			rec, _ := json.Marshal(partialRecord{Version: partialVersion, URL: srv.URL + "/data", ETag: `"v1"`, Length: int64(len(body))})
			plant(t, partialPath(out), []byte("ATTACKE-"), os.FileMode(c.mode), c.uid)
			plant(t, recordPath(out), rec, os.FileMode(c.mode), c.uid)
			cmd := exec.Command(bin, "get", "-q", srv.URL+"/data", "-o", out)
			b, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(b), c.want) || !strings.Contains(string(b), partialPath(out)) {
				t.Errorf("exit %d, want %d naming %s and %q:\n%s", code, exitUsage, partialPath(out), c.want, b)
			}
			if _, err := os.Lstat(out); err == nil {
				t.Error("an output was published from the planted partial")
			}
		})
	}
}

// The same for a planted harvest state and partial: --resume refuses them.
func TestBinaryHarvestRefusesPlantedState(t *testing.T) {
	bin := binary(t)
	srv := newPageServer(t, objects(1, 2), objects(3, 4))
	dir := sharedDir(t)
	out := filepath.Join(dir, "rows.jsonl")
	url := srv.URL + "/"
	st := harvestState{Version: stateVersion, URL: url, Pages: "auto", Items: "*", Format: "jsonl", Next: srv.URL + "/?page=2", Done: 1, Rows: 2, Offset: 0}
	b, _ := json.Marshal(st)
	plant(t, statePath(out), b, 0o644, nobody)
	plant(t, partialPath(out), []byte("{\"id\":\"planted\"}\n"), 0o644, nobody)
	cmd := exec.Command(bin, "harvest", "-q", url, "-o", out, "--resume")
	text, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(text), statePath(out)) || !strings.Contains(string(text), "owned by another user") {
		t.Errorf("exit %d, want %d naming %s:\n%s", code, exitUsage, statePath(out), text)
	}
}

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// Two overlapping get -o FILE runs (as cron starts them): the second finds
// the first's lock, says so and exits 2, and never touches its partial; the
// first publishes the whole body, whose length and hash are checked on the
// file itself.
func TestBinaryOverlappingGetsOneWriter(t *testing.T) {
	bin := binary(t)
	body := bytes.Repeat([]byte("0123456789"), 100)
	sum := sha256.Sum256(body)
	release := make(chan struct{})
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Etag", `"v1"`)
		w.Header().Set("Content-Length", "1000")
		if calls.Add(1) > 1 {
			// Later runs get the whole body at once (Range ignored).
			w.Write(body)
			return
		}
		w.Write(body[:500])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Write(body[500:])
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "dump.bin")
	args := []string{"get", "-q", srv.URL + "/dump", "-o", out, "--sha256", hex.EncodeToString(sum[:])}
	first := exec.Command(bin, args...)
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	awaitChild(t, first, "the first run wrote nothing", func() bool {
		st, err := os.Stat(partialPath(out))
		return err == nil && st.Size() >= 500
	})
	second := exec.Command(bin, args...)
	b, _ := second.CombinedOutput()
	close(release)
	if err := first.Wait(); err != nil {
		t.Fatalf("first run: %v\n%s", err, firstErr.String())
	}
	if code := second.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(b), "another steady run is writing") {
		t.Errorf("second run: exit %d, want %d saying another run writes the file:\n%s", code, exitUsage, b)
	}
	got, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("published %d bytes (%v), want the 1000-byte body", len(got), err)
	}
	for _, left := range []string{partialPath(out), recordPath(out), lockPath(out)} {
		if _, err := os.Lstat(left); err == nil {
			t.Errorf("%s left behind", left)
		}
	}
}

// A lock left by a killed run is not stale: the kernel dropped it with the
// process, and the next run takes it.
func TestGetTakesALeftLock(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("whole")) }))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(lockPath(out), []byte("12345\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errText := cli(t, "get", "-q", srv.URL, "-o", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	if b, _ := os.ReadFile(out); string(b) != "whole" {
		t.Fatalf("published %q", b)
	}
}

// Two overlapping harvest --resume runs never interleave: the second exits
// 2, and the file has every row exactly once, with no torn line.
func TestBinaryOverlappingHarvestsOneWriter(t *testing.T) {
	bin := binary(t)
	srv := dripServer(10000)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	url := srv.URL + "/items?limit=100"
	// An interrupted harvest to resume.
	start := exec.Command(bin, "harvest", "-q", url, "-o", out)
	if err := start.Start(); err != nil {
		t.Fatal(err)
	}
	awaitChild(t, start, "no progress recorded", func() bool {
		st, err := loadState(statePath(out))
		return err == nil && st != nil && st.Done >= 2
	})
	start.Process.Signal(syscall.SIGINT)
	start.Wait()
	st, err := loadState(statePath(out))
	if err != nil || st == nil {
		t.Fatalf("no state after the interruption: %v", err)
	}
	done := st.Done

	first := exec.Command(bin, "harvest", "-q", url, "-o", out, "--resume")
	var firstOut bytes.Buffer
	first.Stderr = &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	awaitChild(t, first, "the resume made no progress", func() bool {
		st, err := loadState(statePath(out))
		return err == nil && st != nil && st.Done > done
	})
	for _, extra := range [][]string{{"--resume"}, {"--force"}} {
		second := exec.Command(bin, append([]string{"harvest", "-q", url, "-o", out}, extra...)...)
		b, _ := second.CombinedOutput()
		if code := second.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(b), "another steady run is writing") {
			t.Errorf("overlapping harvest %v: exit %d, want %d:\n%s", extra, code, exitUsage, b)
		}
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("resume: %v\n%s", err, firstOut.String())
	}
	checkExact(t, rowsOf(t, out), 10000)
	if _, err := os.Lstat(statePath(out)); err == nil {
		t.Error("a state was left beside the finished output")
	}
}

// Under a umask that lets the group write (002, as with per-user groups),
// the partial stays 0600 while it may be continued, so a directory of mode
// 0775 does not make steady refuse its own partial, and the output gets
// the umask's mode when it appears.
func TestBinaryPartialIsPrivateUntilPublished(t *testing.T) {
	bin := binary(t)
	body := bytes.Repeat([]byte("z"), 1000)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write(body[:500])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Write(body[500:])
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "group")
	if err := os.Mkdir(dir, 0o775); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o775)
	out := filepath.Join(dir, "dump.bin")
	cmd := exec.Command("sh", "-c", `umask 002 && exec "$0" "$@"`, bin, "get", "-q", srv.URL, "-o", out)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	awaitChild(t, cmd, "no partial written", func() bool {
		st, err := os.Stat(partialPath(out))
		return err == nil && st.Size() >= 500
	})
	st, err := os.Stat(partialPath(out))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the partial's mode is %v (%v), want 0600", st.Mode().Perm(), err)
	}
	close(release)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o664 {
		t.Errorf("the output's mode is %v (%v), want 0664", st.Mode().Perm(), err)
	}
}

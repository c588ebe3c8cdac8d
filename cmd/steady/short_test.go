package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// A wrong cursor field ends the walk after page 1, whose X-Total-Count said
// 1234: that is a failure naming both numbers, not "harvested 100 rows".
func TestBinaryHarvestShortOfAnnouncedTotal(t *testing.T) {
	bin := binary(t)
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1234, Style: steadytest.Cursor})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	cmd := exec.Command(bin, "harvest", "-q", srv.URL+"/items?limit=100", "--pages", "cursor:wrong_field:cursor", "-o", out)
	b, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(string(b), "announced 1234 rows") || !strings.Contains(string(b), "after 100") {
		t.Fatalf("exit %d, %s; want 1 naming 1234 and 100", code, b)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a short harvest appeared as the output")
	}
	if _, err := os.Stat(statePath(out)); err == nil {
		t.Fatal("a state remains, though there is no page to resume from")
	}
	checkExact(t, rowsOf(t, partialPath(out)), 100)

	// To stdout: the rows are written, the exit says they are not all.
	cmd = exec.Command(bin, "harvest", "-q", srv.URL+"/items?limit=100", "--pages", "cursor:wrong_field:cursor")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, _ := cmd.Output()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || strings.Count(string(stdout), "\n") != 100 || !strings.Contains(stderr.String(), "stdout") {
		t.Fatalf("stdout: exit %d, %d rows, %q", code, strings.Count(string(stdout), "\n"), stderr.String())
	}

	// The right field, or a cap below the total, is a success.
	if b, err := exec.Command(bin, "harvest", "-q", srv.URL+"/items?limit=100", "--pages", "cursor:next_cursor:cursor", "-o", out, "--force").CombinedOutput(); err != nil {
		t.Fatalf("right field: %v %s", err, b)
	}
	checkExact(t, rowsOf(t, out), 1234)
	if b, err := exec.Command(bin, "harvest", "-q", srv.URL+"/items?limit=100", "--pages", "cursor:next_cursor:cursor", "--max-rows", "150", "-o", out, "--force").CombinedOutput(); err != nil {
		t.Fatalf("capped: %v %s", err, b)
	}
}

// A total in the body, named with --total, and kept across a resume whose
// pages do not repeat it.
func TestHarvestShortOfTotalFieldAcrossResume(t *testing.T) {
	srv := newPageServer(t,
		`{"meta":{"total":10},"data":`+objects(1, 2)+`}`,
		`{"data":`+objects(3, 4)+`}`,
		`{"data":`+objects(5, 6)+`}`)
	srv.fail[2] = http.StatusServiceUnavailable
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	args := []string{"harvest", "-q", "--retries", "0", srv.URL, "--items", "data", "--total", "meta.total", "-o", out}
	if code, _, errText := cli(t, args...); code != exitInterrupted {
		t.Fatalf("first run: %d %q", code, errText)
	}
	srv.mu.Lock()
	delete(srv.fail, 2)
	srv.mu.Unlock()
	code, _, errText := cli(t, append(args, "--resume")...)
	if code != exitFailed || !strings.Contains(errText, "announced 10 rows") || !strings.Contains(errText, "after 6") {
		t.Fatalf("resume: exit %d, %q; want 1 naming 10 and 6", code, errText)
	}
	checkExact(t, rowsOf(t, partialPath(out)), 6)
	// Without --total the body's field is not read: a success.
	if code, _, errText := cli(t, "harvest", "-q", srv.URL, "--items", "data", "-o", out, "--force"); code != exitOK {
		t.Fatalf("without --total: %d %q", code, errText)
	}
}

// Tests that watch the built binary through the kernel: its system calls
// (strace) and where its threads wait (/proc).
package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/steadyhttp/steady/steadytest"
)

// traced is one traced call, as strace printed it when it returned.
type traced struct {
	name, args string
	ret        int
}

var (
	traceLine    = regexp.MustCompile(`^\d+\s+(\w+)\((.*)\)\s+=\s+(-?\d+)`)
	traceResumed = regexp.MustCompile(`^\d+\s+<\.\.\. (\w+) resumed>(.*)\)\s+=\s+(-?\d+)`)
	traceStart   = regexp.MustCompile(`^(\d+)\s+(\w+)\((.*) <unfinished \.\.\.>$`)
	quoted       = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
)

// strace runs the binary under strace and returns its file system calls in
// the order they returned.
func strace(t *testing.T, args ...string) []traced {
	t.Helper()
	path, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("strace is not installed (.ci/run installs it)")
		}
		t.Skip("strace is not installed")
	}
	out := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(path, append([]string{"-f", "-qq", "-s", "4096", "-e", "trace=openat,write,fsync,fdatasync,renameat,renameat2,rename", "-o", out}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(b), "ptrace") {
			if os.Getenv("CI") == "true" {
				t.Fatalf("strace cannot trace here: %s", b)
			}
			t.Skipf("strace cannot trace here: %s", b)
		}
		t.Fatalf("%v: %v\n%s", args, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]string{} // pid -> args of an unfinished call
	var calls []traced
	for _, line := range strings.Split(string(b), "\n") {
		if m := traceStart.FindStringSubmatch(line); m != nil {
			pending[m[1]+m[2]] = m[3]
			continue
		}
		var name, args, ret string
		if m := traceLine.FindStringSubmatch(line); m != nil {
			name, args, ret = m[1], m[2], m[3]
		} else if m := traceResumed.FindStringSubmatch(line); m != nil {
			pid := strings.Fields(line)[0]
			name, args, ret = m[1], pending[pid+m[1]]+m[2], m[3]
		} else {
			continue
		}
		n, _ := strconv.Atoi(ret)
		calls = append(calls, traced{name, args, n})
	}
	return calls
}

func firstFD(args string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(args, ",", 2)[0]))
	return n
}

// A power loss at any moment must leave a state whose offset the partial
// file holds, and a rename that is on disk: the traced calls of a real
// harvest show, for every state written, at least as many bytes of the
// partial file fsynced as the state counts (the harvest may go on
// appending while a state is written, ADR 192), the state's temporary file
// fsynced before its rename, and the directory fsynced after.
func TestBinaryHarvestSyncsDataBeforeState(t *testing.T) {
	bin := binary(t)
	// Every page drips, so the walk lasts well over the second after which
	// a state is due: states are written while pages are.
	srv := dripServer(2000)
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "rows.jsonl")
	calls := strace(t, bin, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out)

	paths := map[int]string{} // fd -> path, from openat
	dirty := map[string]bool{}
	offsets := map[string]int{} // state temporary file -> the offset it records
	var written, synced int     // bytes of the partial file
	renames, dirPending := 0, false
	for i, c := range calls {
		switch c.name {
		case "openat":
			if m := quoted.FindStringSubmatch(c.args); m != nil && c.ret >= 0 {
				paths[c.ret] = m[1]
			}
		case "write":
			p := paths[firstFD(c.args)]
			if strings.HasPrefix(p, dir) {
				dirty[p] = true
			}
			if p == partialPath(out) {
				written += c.ret
			}
			if m := stateOffset.FindStringSubmatch(c.args); m != nil {
				offsets[p], _ = strconv.Atoi(m[1])
			}
		case "fsync", "fdatasync":
			p := paths[firstFD(c.args)]
			dirty[p] = false
			if p == dir {
				dirPending = false
			}
			if p == partialPath(out) {
				synced = written
			}
		case "renameat", "renameat2", "rename":
			m := quoted.FindAllStringSubmatch(c.args, -1)
			if len(m) != 2 || !strings.HasPrefix(m[0][1], dir) {
				continue
			}
			from, to := m[0][1], m[1][1]
			if dirPending {
				t.Errorf("call %d: rename to %s before the directory was synced after the last one", i, to)
			}
			if to == statePath(out) && offsets[from] > synced {
				t.Errorf("call %d: a state counting %d bytes renamed into place with %d bytes of the partial file synced", i, offsets[from], synced)
			}
			if to == out && dirty[partialPath(out)] {
				t.Errorf("call %d: the output renamed into place while the partial file had unsynced writes", i)
			}
			if dirty[from] {
				t.Errorf("call %d: %s renamed before it was synced", i, from)
			}
			renames++
			dirPending = true
		}
	}
	if dirPending {
		t.Error("the last rename was never made durable by syncing the directory")
	}
	// The first state, at least one more (20 pages of 4 drips of 20 ms
	// last over 1.6 s, and a state is due every second), at most one per
	// page that has a next one, and the output.
	if renames < 1+1+1 || renames > 1+19+1 {
		t.Errorf("%d renames in %d calls, want 3 to 21", renames, len(calls))
	}
	if len(offsets) < 2 {
		t.Errorf("%d states' offsets found in the trace, want 2 or more", len(offsets))
	}
	checkExact(t, rowsOf(t, out), 2000)
}

// stateOffset finds the offset in a state file's text as strace prints it.
var stateOffset = regexp.MustCompile(`\\"offset\\": (\d+)`)

// blockedIn reports whether a thread of process pid waits in the kernel
// function named (its wchan).
func blockedIn(pid int, fn string) bool {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	for _, t := range tasks {
		if b, _ := os.ReadFile(t); string(b) == fn {
			return true
		}
	}
	return false
}

// -o onto a FIFO that nobody reads waits for a reader; Ctrl-C must end the
// wait (it used to leave the process blocked in open until killed).
func TestBinaryCtrlCWhileWaitingForFIFOReader(t *testing.T) {
	bin := binary(t)
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 10})
	defer srv.Close()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, args := range [][]string{
		{"get", "-q", srv.URL + "/items", "-o", fifo},
		{"harvest", "-q", srv.URL + "/items", "-o", fifo},
	} {
		cmd := exec.Command(bin, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		for !blockedIn(cmd.Process.Pid, "wait_for_partner") {
			select {
			case <-exited:
				t.Fatalf("%s exited before waiting for a reader: %s", args[0], stderr.String())
			case <-time.After(5 * time.Millisecond): // polling /proc; not a timing assertion
			}
		}
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Fatalf("%s still waiting for a reader 30s after Ctrl-C", args[0])
		}
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
			t.Fatalf("%s: exit %d, %q; want 3", args[0], code, stderr.String())
		}
	}
}

//go:build unix

package main

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// victim is a file an attacker would like steady to overwrite.
func victim(t *testing.T) (path string, content []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "victim")
	content = []byte("precious\n")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, content
}

func unchanged(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s was changed: %q, %v", path, got, err)
	}
}

func isLink(t *testing.T, path string) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link: %v %v", path, st, err)
	}
}

// readFIFO makes a FIFO and collects what is written into it.
func readFIFO(t *testing.T) (path string, got func() string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan string, 1)
	go func() {
		f, err := os.Open(path) // blocks until the writer opens it
		if err != nil {
			done <- "open: " + err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		done <- string(b)
	}()
	return path, func() string { return <-done }
}

func TestOutputSymlinkIsNeverFollowedNorReplaced(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 10})
	defer srv.Close()
	target, content := victim(t)
	link := filepath.Join(t.TempDir(), "out.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"get", "-q", srv.URL + "/items?limit=2", "-o", link, "--force"},
		{"harvest", "-q", srv.URL + "/items?limit=2", "-o", link, "--force"},
		{"simulate", "--scenario", "outage", "--clients", "5", "--plot", link, "--force"},
	} {
		code, _, errText := cli(t, args...)
		if code != exitUsage || !strings.Contains(errText, "symbolic link") {
			t.Errorf("%s: exit %d, %q; want 2 naming the link", args[0], code, errText)
		}
		unchanged(t, target, content)
		isLink(t, link)
	}
	// A dangling link is refused too: replacing it would be as bad as
	// writing through it when it names /dev/stdout or such.
	dangling := filepath.Join(t.TempDir(), "dangling.json")
	os.Symlink(filepath.Join(t.TempDir(), "nowhere"), dangling)
	if code, _, errText := cli(t, "get", "-q", srv.URL+"/items?limit=2", "-o", dangling); code != exitUsage || !strings.Contains(errText, "symbolic link") {
		t.Errorf("dangling link: exit %d, %q", code, errText)
	}
	isLink(t, dangling)
}

func TestHarvestPartialSymlinkIsRefused(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 10})
	defer srv.Close()
	target, content := victim(t)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	if err := os.Symlink(target, partialPath(out)); err != nil {
		t.Fatal(err)
	}
	code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=2", "-o", out, "--force")
	if code != exitUsage || !strings.Contains(errText, "symbolic link") || !strings.Contains(errText, partialPath(out)) {
		t.Fatalf("exit %d, %q; want 2 naming the partial file", code, errText)
	}
	unchanged(t, target, content)
	isLink(t, partialPath(out))
	// A FIFO planted at the partial name is not opened at all.
	os.Remove(partialPath(out))
	if err := syscall.Mkfifo(partialPath(out), 0o600); err != nil {
		t.Skip(err)
	}
	code, _, errText = cli(t, "harvest", "-q", srv.URL+"/items?limit=2", "-o", out, "--force")
	if code != exitUsage || !strings.Contains(errText, "FIFO") {
		t.Fatalf("FIFO partial: exit %d, %q", code, errText)
	}
}

// The partial file is swapped for a link between a run and its resume.
func TestHarvestResumeThroughSwappedSymlinkIsRefused(t *testing.T) {
	b, ts := blockingServer(t, 500, 200)
	srv := ts.URL
	b.blocked.Store(true)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	if code, _, errText := cli(t, "harvest", "-q", "--retries", "0", srv+"/items?limit=100", "-o", out); code != exitInterrupted {
		t.Fatalf("first run: %d %q", code, errText)
	}
	target, content := victim(t)
	os.Remove(partialPath(out))
	os.Symlink(target, partialPath(out))
	b.blocked.Store(false)
	code, _, errText := cli(t, "harvest", "-q", srv+"/items?limit=100", "-o", out, "--resume")
	if code != exitUsage || !strings.Contains(errText, "symbolic link") {
		t.Fatalf("resume: exit %d, %q", code, errText)
	}
	unchanged(t, target, content)
	// The state file as a link is refused as well, not read through.
	os.Remove(partialPath(out))
	os.WriteFile(partialPath(out), nil, 0o644)
	st := statePath(out)
	real := st + ".real"
	os.Rename(st, real)
	os.Symlink(real, st)
	code, _, errText = cli(t, "harvest", "-q", srv+"/items?limit=100", "-o", out, "--resume")
	if code != exitUsage || !strings.Contains(errText, "symbolic link") {
		t.Fatalf("state link: exit %d, %q", code, errText)
	}
}

func TestOutputIntoFIFO(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 250})
	defer srv.Close()
	fifo, got := readFIFO(t)
	code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=100", "-o", fifo)
	if code != exitOK {
		t.Fatalf("harvest into a FIFO: %d %q", code, errText)
	}
	if text := got(); strings.Count(text, "\n") != 250 || !strings.HasPrefix(text, `{"id":1,`) {
		t.Fatalf("the FIFO received %d lines: %.40q", strings.Count(text, "\n"), text)
	}
	st, err := os.Lstat(fifo)
	if err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", st, err)
	}
	for _, name := range []string{partialPath(fifo), statePath(fifo)} {
		if _, err := os.Lstat(name); err == nil {
			t.Errorf("%s was made beside a FIFO", name)
		}
	}
	if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items", "-o", fifo, "--resume"); code != exitUsage || !strings.Contains(errText, "--resume needs") {
		t.Errorf("resume into a FIFO: %d %q", code, errText)
	}

	fifo, got = readFIFO(t)
	if code, _, errText := cli(t, "get", "-q", srv.URL+"/items?limit=2", "-o", fifo); code != exitOK {
		t.Fatalf("get into a FIFO: %d %q", code, errText)
	}
	if text := got(); !strings.Contains(text, `"id":2`) {
		t.Fatalf("get wrote %q into the FIFO", text)
	}
}

func TestOutputDash(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 5})
	defer srv.Close()
	if code, out, errText := cli(t, "get", "-q", srv.URL+"/items?limit=2", "-o", "-"); code != exitOK || !strings.Contains(out, `"id":2`) {
		t.Fatalf("get -o -: %d %q %q", code, out, errText)
	}
	if code, out, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=2", "-o", "-"); code != exitOK || strings.Count(out, "\n") != 5 {
		t.Fatalf("harvest -o -: %d %q %q", code, out, errText)
	}
	if _, err := os.Lstat("-"); err == nil {
		t.Fatal("a file named - was made")
	}
	code, out, errText := cli(t, "simulate", "--scenario", "outage", "--clients", "5", "--plot", "-")
	if code != exitOK || !strings.HasPrefix(strings.TrimSpace(out), "<svg") || !strings.Contains(errText, "Outage") {
		t.Fatalf("simulate --plot -: %d, stdout %.40q, stderr %.40q", code, out, errText)
	}
}

// device returns a character device of the memory driver (major 1): a node
// of the test's own where it can make one (as root), so that a regression
// cannot replace the machine's; else the one in /dev, which a user who is
// not root cannot replace anyway.
func device(t *testing.T, name string, minor int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if _, err := os.Stat("/dev/" + name); err != nil {
			t.Skipf("no /dev/%s", name)
		}
		return "/dev/" + name
	}
	dev := filepath.Join(t.TempDir(), name)
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|minor); err != nil {
		t.Fatalf("mknod: %v", err)
	}
	return dev
}

// As root, "steady get URL -o /dev/null --force" once replaced /dev/null with
// a regular file; each command now writes into the device and leaves it.
func TestBinaryOutputIntoDeviceKeepsIt(t *testing.T) {
	bin := binary(t)
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 50})
	defer srv.Close()
	dev := device(t, "null", 3)
	for _, args := range [][]string{
		{"get", "-q", srv.URL + "/items?limit=10", "-o", dev, "--force"},
		{"get", "-q", srv.URL + "/items?limit=10", "-o", dev},
		{"harvest", "-q", srv.URL + "/items?limit=10", "-o", dev, "--force"},
		{"simulate", "--scenario", "outage", "--clients", "5", "--plot", dev, "--force"},
	} {
		b, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
		st, err := os.Lstat(dev)
		if err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%v replaced %s: %v %v", args, dev, st, err)
		}
	}
	if b, _ := os.ReadFile(dev); len(b) != 0 {
		t.Fatalf("%s is not a null device any more: %q", dev, b)
	}
}

// /dev/stdout onto a pipe is the pipe: written into, never replaced.
func TestBinaryOutputDevStdout(t *testing.T) {
	bin := binary(t)
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 30})
	defer srv.Close()
	out, err := exec.Command(bin, "harvest", "-q", srv.URL+"/items?limit=10", "-o", "/dev/stdout", "--force").Output()
	if err != nil || strings.Count(string(out), "\n") != 30 {
		t.Fatalf("harvest -o /dev/stdout: %v, %d lines", err, strings.Count(string(out), "\n"))
	}
	out, err = exec.Command(bin, "get", "-q", srv.URL+"/items?limit=3", "-o", "/dev/stdout").Output()
	if err != nil || !strings.Contains(string(out), `"id":3`) {
		t.Fatalf("get -o /dev/stdout: %v, %q", err, out)
	}
	// /dev/stdout onto a regular file is a link to a regular file: refused,
	// so that not even root replaces /dev/stdout.
	f, err := os.Create(filepath.Join(t.TempDir(), "redirected"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, "get", "-q", srv.URL+"/items?limit=3", "-o", "/dev/stdout", "--force")
	cmd.Stdout = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(stderr.String(), "-o -") {
		t.Fatalf("onto a redirected stdout: %v, %q", err, stderr.String())
	}
	if st, err := os.Lstat("/dev/stdout"); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("/dev/stdout is no longer a link: %v %v", st, err)
	}
}

func TestOutputRefusesDirectoriesAndSockets(t *testing.T) {
	dir := t.TempDir()
	if _, err := checkOutput(dir, true); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
	sock := filepath.Join(dir, "s")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		t.Skip(err)
	}
	if _, err := checkOutput(sock, true); err == nil || !strings.Contains(err.Error(), "socket") {
		t.Errorf("socket: %v", err)
	}
}

// A hard link planted at FILE.partial: a fresh harvest unlinks it and
// makes its own file; a resume refuses to write a file with two names.
func TestHarvestPartialHardLinkIsNotWrittenThrough(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 10})
	defer srv.Close()
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	content := []byte("precious\n")
	os.WriteFile(target, content, 0o644)
	out := filepath.Join(dir, "rows.jsonl")
	if err := os.Link(target, partialPath(out)); err != nil {
		t.Skip(err)
	}
	if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=5", "-o", out, "--force"); code != exitOK {
		t.Fatalf("fresh harvest: %d %q", code, errText)
	}
	unchanged(t, target, content)
	checkExact(t, rowsOf(t, out), 10)

	// Resume onto a partial file that is a hard link to the victim.
	os.Remove(out)
	os.WriteFile(statePath(out), []byte(`{"version":1,"url":"`+srv.URL+`/items?limit=5","pages":"auto","items":"*","format":"jsonl","next":"`+srv.URL+`/items?limit=5","offset":0}`), 0o644)
	os.Link(target, partialPath(out))
	code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=5", "-o", out, "--resume")
	if code != exitUsage || !strings.Contains(errText, "hard links") {
		t.Fatalf("resume: exit %d, %q; want 2 naming the hard link", code, errText)
	}
	unchanged(t, target, content)
}

// A device that fails every write (/dev/full: ENOSPC) fails the command
// with the cause named, and stays what it was.
func TestOutputIntoFailingDevice(t *testing.T) {
	full := device(t, "full", 7)
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 10})
	defer srv.Close()
	for _, sub := range []string{"get", "harvest"} {
		code, _, errText := cli(t, sub, "-q", srv.URL+"/items?limit=5", "-o", full)
		if code != exitFailed || !strings.Contains(errText, "no space left") {
			t.Errorf("%s -o /dev/full: exit %d, %q; want 1 naming ENOSPC", sub, code, errText)
		}
	}
	if st, err := os.Lstat(full); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s changed: %v %v", full, st, err)
	}
}

// A FIFO planted where the output should go, by another user, would hand
// them the data: refused without being opened. The same for a link to
// another user's device (their terminal, say).
func TestOutputSpecialFileOfAnotherUserIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a file of another user needs root")
	}
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 10})
	defer srv.Close()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out.json")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Skip(err)
	}
	os.Chown(fifo, 65534, 65534)
	// A reader that never blocks: were the FIFO written, it would get the
	// data.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dev := filepath.Join(dir, "their-tty")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatal(err)
	}
	os.Chown(dev, 65534, 65534)
	link := filepath.Join(dir, "link.json")
	os.Symlink(dev, link)
	for _, args := range [][]string{
		{"get", "-q", srv.URL + "/items", "-o", fifo},
		{"harvest", "-q", srv.URL + "/items", "-o", fifo},
		{"get", "-q", srv.URL + "/items", "-o", dev},
		{"get", "-q", srv.URL + "/items", "-o", link},
	} {
		code, _, errText := cli(t, args...)
		if code != exitUsage || !strings.Contains(errText, "another user") {
			t.Errorf("%v: exit %d, %q; want 2 naming the owner", args, code, errText)
		}
	}
	if b, _ := io.ReadAll(r); len(b) != 0 {
		t.Fatalf("the other user's FIFO received %q", b)
	}
}

//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair with /dev/ptmx and two ioctls.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptm, pts
}

// get with stdout on a terminal refuses a binary body (exit 2) unless -o -
// is given; a text body is written.
func TestBinaryGetRefusesBinaryToTerminal(t *testing.T) {
	bin := binary(t)
	srv := binaryServer(t)
	_, pts := openPTY(t)
	run := func(args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Stdout = pts
		var errb bytes.Buffer
		cmd.Stderr = &errb
		_ = cmd.Run()
		return cmd.ProcessState.ExitCode(), errb.String()
	}
	if code, errText := run("get", "-q", srv.URL+"/image"); code != exitUsage || !strings.Contains(errText, "not writing the body to a terminal") || !strings.Contains(errText, "-o -") {
		t.Errorf("binary to a terminal: exit %d, %q; want %d pointing at -o -", code, errText, exitUsage)
	}
	if code, errText := run("get", "-q", srv.URL+"/image", "-o", "-"); code != exitOK {
		t.Errorf("-o -: exit %d, %q", code, errText)
	}
	if code, errText := run("get", "-q", srv.URL+"/text"); code != exitOK {
		t.Errorf("text to a terminal: exit %d, %q", code, errText)
	}
}

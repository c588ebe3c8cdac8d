//go:build linux

package main

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
)

// fullBacklog returns the address of a listener whose accept queue is full,
// so that a new connection hangs in its handshake: a host that does not
// answer, on loopback.
func fullBacklog(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	c, err := net.Dial("tcp", addr) // fills the queue of one
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return addr
}

// Item 2: --connect-timeout bounds the handshake of each attempt.
func TestBinaryConnectTimeout(t *testing.T) {
	addr := fullBacklog(t)
	for _, env := range [][]string{nil, {"STEADY_CONNECT_TIMEOUT=0.2"}} {
		args := []string{"get", "-q", "--retries", "1"}
		if env == nil {
			args = append(args, "--connect-timeout", "0.2")
		}
		code, _, errText := runBinary(t, env, append(args, "http://"+addr+"/")...)
		if code != exitFailed || !strings.Contains(errText, "dial") || !strings.Contains(errText, "timeout") || !strings.Contains(errText, "2 attempts") {
			t.Errorf("%v: exit %d, %q; want 1 after two timed-out dials", env, code, errText)
		}
	}
}

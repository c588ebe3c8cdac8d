package faults_test

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// The server is the module's tool (see go.mod), so its version is the one
// go.mod and go.sum pin and the build needs nothing but the module cache.
const (
	toxiproxyModule  = "github.com/Shopify/toxiproxy/v2"
	toxiproxyPkg     = toxiproxyModule + "/cmd/server"
	toxiproxyVersion = "v2.12.0"
)

// The server process is shared by every test of the package: started by
// the first test that asks for it, stopped by TestMain.
var (
	toxiOnce sync.Once
	toxi     *toxiServer
	toxiErr  error
)

// toxiproxyClient returns a client of the running toxiproxy server,
// starting the server on first use. A server that cannot be built or
// started fails the test rather than skipping it: the matrix is the point
// of this module.
func toxiproxyClient(t testing.TB) *toxiproxy.Client {
	t.Helper()
	toxiOnce.Do(func() { toxi, toxiErr = startToxiproxy() })
	if toxiErr != nil {
		t.Fatalf("toxiproxy: %v", toxiErr)
	}
	return toxiproxy.NewClient(toxi.addr)
}

// toxiServer is a toxiproxy server running as a child process.
type toxiServer struct {
	dir    string // holds the binary
	addr   string // the API's host:port
	cmd    *exec.Cmd
	out    *tailBuffer
	exited chan struct{} // closed when the process has been waited for
	err    error         // the process's exit, once exited is closed
}

// startToxiproxy builds the server into a temporary directory, starts it
// with its API on a free loopback port and waits until the API answers.
func startToxiproxy() (*toxiServer, error) {
	dir, err := os.MkdirTemp("", "steady-faults-")
	if err != nil {
		return nil, err
	}
	s := &toxiServer{dir: dir, out: &tailBuffer{max: 16 << 10}, exited: make(chan struct{})}
	if err := s.build(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.cmd = exec.Command(filepath.Join(dir, "toxiproxy-server"), "-host", "127.0.0.1", "-port", strconv.Itoa(port))
	// Warnings are routine here (every reset and cut connection logs one);
	// errors are kept for the failure message.
	s.cmd.Env = append(os.Environ(), "LOG_LEVEL=error")
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	dieWithParent(s.cmd)
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting the server: %w", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.awaitAPI(15 * time.Second); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// build compiles the pinned server with the go command that runs the tests
// (go test puts its own GOROOT/bin first on the PATH), and checks from the
// binary's build information that it is the pinned release: the server
// itself reports the version only when a release build stamps it. The build
// cache makes every run after the first take about a second.
func (s *toxiServer) build() error {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("finding the go command to build toxiproxy: %w", err)
	}
	bin := filepath.Join(s.dir, "toxiproxy-server")
	cmd := exec.Command(goCmd, "build", "-o", bin, toxiproxyPkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", toxiproxyPkg, err, out)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("reading the build information of %s: %w", bin, err)
	}
	for _, m := range append([]*debug.Module{&info.Main}, info.Deps...) {
		if m.Path == toxiproxyModule {
			if m.Version != toxiproxyVersion {
				return fmt.Errorf("built %s %s, want %s", m.Path, m.Version, toxiproxyVersion)
			}
			return nil
		}
	}
	return fmt.Errorf("the binary built from %s does not record the module %s", toxiproxyPkg, toxiproxyModule)
}

// freePort returns a loopback port that was free a moment ago. The server
// takes its port as a flag, so the tiny window between closing this
// listener and the server binding the port cannot be avoided; awaitAPI
// checks that what answers is toxiproxy.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// awaitAPI polls the API's version endpoint until it answers as toxiproxy
// does, the process exits, or limit passes. Polling is the only
// way to learn that another process is listening: the server logs that it
// starts before it binds the port.
func (s *toxiServer) awaitAPI(limit time.Duration) error {
	c := toxiproxy.NewClient(s.addr)
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		v, err := c.Version()
		if err == nil {
			if !bytes.Contains(v, []byte(`"version"`)) {
				return fmt.Errorf("what answers at %s is not toxiproxy: its version is %q", s.addr, v)
			}
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("the server exited before its API answered (%v):\n%s", s.err, s.out)
		case <-deadline.C:
			return fmt.Errorf("the API at %s did not answer within %v: %v\n%s", s.addr, limit, err, s.out)
		case <-tick.C:
		}
	}
}

// stop asks the server to shut down (it handles SIGTERM), kills it if it
// has not exited within a few seconds, and removes its binary.
func (s *toxiServer) stop() error {
	defer os.RemoveAll(s.dir)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping toxiproxy: %w", err)
	}
	grace := time.NewTimer(5 * time.Second)
	defer grace.Stop()
	select {
	case <-s.exited:
		return nil
	case <-grace.C:
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("toxiproxy ignored SIGTERM for 5s and was killed:\n%s", s.out)
	}
}

// tailBuffer keeps the last max bytes written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

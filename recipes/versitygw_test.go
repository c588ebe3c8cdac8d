package recipes_test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The S3-compatible server of the AWS recipe: versitygw on its posix
// backend, started by the test on 127.0.0.1 with a root of its own.
const (
	s3Access = "steadyrecipeaccess"
	s3Secret = "steadyrecipesecret0000000000000000000000"
)

// versitygwBinary finds the server: $STEADY_VERSITYGW, then where .ci/run
// installs it, then the PATH. An absent one fails the test under CI and
// skips it elsewhere.
func versitygwBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STEADY_VERSITYGW"); p != "" {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "steady-ci", "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	const how = "versitygw is not installed (go install github.com/versity/versitygw/cmd/versitygw into $HOME/.cache/steady-ci/bin, or set STEADY_VERSITYGW)"
	if os.Getenv("CI") == "true" {
		t.Fatal(how + "; .ci/run installs it")
	}
	t.Skip(how + "; skipping outside CI")
	return ""
}

// startVersityGW serves a fresh root on a free loopback port until the
// test ends and returns its host:port.
func startVersityGW(t *testing.T) string {
	t.Helper()
	bin := versitygwBinary(t)
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	out := &tail{max: 16 << 10}
	cmd := exec.Command(bin, "--quiet", "--access", s3Access, "--secret", s3Secret, "--port", addr, "posix", root)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY=", "ROOT_SECRET_KEY=")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		select {
		case err := <-exited:
			t.Fatalf("versitygw exited: %v\n%s", err, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s within 20s\n%s", addr, out)
		}
	}
}

// tail keeps the last max bytes written, for a failure message.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = w.b[len(w.b)-w.max:]
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(bytes.ToValidUTF8(w.b, nil))
}

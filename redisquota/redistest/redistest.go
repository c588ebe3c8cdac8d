// Package redistest starts a real redis-server for tests: on 127.0.0.1, on
// a free port, with its files in the test's temporary directory, stopped
// when the test ends. Where redis-server is not installed the test is
// skipped, except under CI=true, where it fails: CI installs it.
package redistest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// A Server is one redis-server process, which a test may kill and start
// again on the same port.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	Addr string // 127.0.0.1:PORT
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts a server for t and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is not installed (apt-get install -y redis-server): %v", err)
		}
		t.Skipf("redis-server is not installed; apt-get install -y redis-server to run this test")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir(), Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	s.Restart()
	t.Cleanup(s.Kill)
	return s
}

// URL is the server's store URL for database 0 under namespace name.
func (s *Server) URL(name string) string { return "redis://" + s.Addr + "/0?name=" + name }

// Restart starts the server again on its port after Kill; it returns once
// the server answers.
func (s *Server) Restart() {
	s.t.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	s.cmd = exec.Command(s.bin, "--bind", "127.0.0.1", "--port", port, "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning")
	s.cmd.Stdout, s.cmd.Stderr = nil, nil
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(s.cmd, s.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := ping(s.Addr); err == nil {
			return
		} else if time.Now().After(deadline) {
			s.Kill()
			s.t.Fatalf("redis-server on %s did not answer: %v", s.Addr, err)
		}
		select {
		case <-s.done:
			s.t.Fatalf("redis-server on %s exited at start", s.Addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Kill stops the server at once, as a crash would, and waits for it.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

func ping(addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond,
		DisableIdentity: true, MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

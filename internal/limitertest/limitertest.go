// Package limitertest starts a real express-rate-limit for tests: the
// paginated API of testdata/ratelimit/server.js, its rows behind one or
// more limiters, on 127.0.0.1. The core's command tests, the bench module
// and the Redis build's fleet test share it, so the server is started and
// stopped one way everywhere. It is imported by tests only.
//
// The server needs node and the packages that `npm ci` installs in
// testdata/ratelimit (.ci/run does both). Without them a test fails under
// CI=true and is skipped elsewhere, with a message saying what is missing.
package limitertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Config is what the server serves: Rows rows, Page a page, behind
// Limiters in order (each request passes every one of them).
type Config struct {
	Rows     int       `json:"rows"`
	Page     int       `json:"page"`
	Limiters []Limiter `json:"limiters"`
	// Total makes every page say Rows in X-Total-Count.
	Total bool `json:"total,omitempty"`
}

// A Limiter is one express-rate-limit: Limit requests a window.
type Limiter struct {
	Limit    int `json:"limit"`
	WindowMs int `json:"windowMs"`
	// Headers is the form of its rate-limit headers: draft-6, draft-7,
	// draft-8, legacy (X-RateLimit-*), or none (its 429s carry no quota
	// field and no Retry-After).
	Headers string `json:"headers"`
	// Name is the quota's name in draft-8's headers.
	Name string `json:"name,omitempty"`
	// RetryAfter false strips Retry-After from its 429s.
	RetryAfter *bool `json:"retryAfter,omitempty"`
}

// Window is the limiter's window.
func (l Limiter) Window() time.Duration { return time.Duration(l.WindowMs) * time.Millisecond }

func (l Limiter) String() string {
	s := fmt.Sprintf("%s %d per %v", l.Headers, l.Limit, l.Window())
	if l.RetryAfter != nil && !*l.RetryAfter {
		s += " without Retry-After"
	}
	return s
}

// A Server is one started server.js.
type Server struct {
	// URL is the server's origin, http://127.0.0.1:port; the rows are at
	// URL+"/items".
	URL   string
	stdin io.WriteCloser
	cmd   *exec.Cmd
	done  chan struct{}
}

// dir is testdata/ratelimit, found from this file, so that any package of
// any module in the repository finds it whatever its working directory.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "ratelimit")
}

// Start starts the server with cfg for t and stops it when t ends (or
// earlier, with [Server.Stop]).
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	d := dir()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(d, "node_modules", "express-rate-limit", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("express-rate-limit is needed (node, and npm ci in %s): %v", d, err)
		}
		t.Skipf("express-rate-limit is not installed (node, and npm ci in %s): %v", d, err)
	}
	spec, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "server.js", string(spec))
	cmd.Dir = d
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{stdin: stdin, cmd: cmd, done: make(chan struct{})}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	go func() { cmd.Wait(); close(s.done) }()
	t.Cleanup(s.Stop)
	port, found := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !found {
		t.Fatalf("server.js did not start: %q, %v", line, err)
	}
	s.URL = "http://127.0.0.1:" + port
	return s
}

// Stop stops the server: it exits when its standard input closes, and is
// killed if it has not within 10 s. Stopping twice is harmless.
func (s *Server) Stop() {
	s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// Stats returns the server's count of served and refused (429) requests.
func (s *Server) Stats(t testing.TB) (served, refused int) {
	t.Helper()
	resp, err := http.Get(s.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Served, Refused int }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Served, st.Refused
}

// Floor is the least time n requests take under the limiters, each of
// which opens a window of Limit requests at the first request after the
// last one reset, as express-rate-limit's memory store does: the time of
// the last request sent as early as every limiter allows, with round trips
// of zero.
func Floor(n int, ls []Limiter) time.Duration {
	type win struct {
		start time.Duration
		count int
		open  bool
	}
	ws := make([]win, len(ls))
	var at time.Duration
	for range n {
		for i, l := range ls {
			if ws[i].open && ws[i].count >= l.Limit {
				at = max(at, ws[i].start+l.Window())
			}
		}
		for i, l := range ls {
			if !ws[i].open || at >= ws[i].start+l.Window() {
				ws[i] = win{start: at, open: true}
			}
			ws[i].count++
		}
	}
	return at
}

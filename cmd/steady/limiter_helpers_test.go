package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// limiterConfig is what testdata/ratelimit/server.js serves: rows behind
// express-rate-limit limiters, in order.
type limiterConfig struct {
	Rows     int       `json:"rows"`
	Page     int       `json:"page"`
	Limiters []limiter `json:"limiters"`
}

type limiter struct {
	Limit      int    `json:"limit"`
	WindowMs   int    `json:"windowMs"`
	Headers    string `json:"headers"` // draft-6, draft-7, draft-8 or legacy
	Name       string `json:"name,omitempty"`
	RetryAfter *bool  `json:"retryAfter,omitempty"` // false strips Retry-After from 429s
}

func (l limiter) window() time.Duration { return time.Duration(l.WindowMs) * time.Millisecond }

// limiterServer is one started server.js.
type limiterServer struct {
	URL   string
	stdin io.WriteCloser
	cmd   *exec.Cmd
}

// startLimiter starts the express-rate-limit server on 127.0.0.1 for the
// test and stops it when the test ends. Without node or the server's
// packages (npm ci in testdata/ratelimit) the test fails under CI and is
// skipped elsewhere.
func startLimiter(t *testing.T, cfg limiterConfig) *limiterServer {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "ratelimit")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "express-rate-limit", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("express-rate-limit is needed (node, and npm ci in %s): %v", dir, err)
		}
		t.Skipf("express-rate-limit is not installed (node, and npm ci in %s): %v", dir, err)
	}
	spec, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "server.js", string(spec))
	cmd.Dir = dir
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
	s := &limiterServer{stdin: stdin, cmd: cmd}
	t.Cleanup(s.stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	port, found := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !found {
		t.Fatalf("server.js did not start: %q, %v", line, err)
	}
	s.URL = "http://127.0.0.1:" + port
	return s
}

func (s *limiterServer) stop() {
	s.stdin.Close() // the server exits when its standard input closes
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// stats returns the server's count of served and refused requests.
func (s *limiterServer) stats(t *testing.T) (served, refused int) {
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

// quotaFloor is the least time n requests take under the limiters, each of
// which opens a window of Limit requests at the first request after the
// last one reset, as express-rate-limit's memory store does: the time of
// the last request sent as early as every limiter allows, with round trips
// of zero.
func quotaFloor(n int, ls []limiter) time.Duration {
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
				at = max(at, ws[i].start+l.window())
			}
		}
		for i, l := range ls {
			if !ws[i].open || at >= ws[i].start+l.window() {
				ws[i] = win{start: at, open: true}
			}
			ws[i].count++
		}
	}
	return at
}

func TestQuotaFloor(t *testing.T) {
	one := []limiter{{Limit: 20, WindowMs: 2000}}
	for _, c := range []struct {
		n    int
		ls   []limiter
		want time.Duration
	}{
		{20, one, 0},
		{21, one, 2 * time.Second},
		{61, one, 6 * time.Second},
		{30, []limiter{{Limit: 10, WindowMs: 1000}, {Limit: 15, WindowMs: 4000}}, 5 * time.Second},
	} {
		if got := quotaFloor(c.n, c.ls); got != c.want {
			t.Errorf("quotaFloor(%d, %+v) = %v, want %v", c.n, c.ls, got, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func (l limiter) String() string {
	s := fmt.Sprintf("%s %d per %v", l.Headers, l.Limit, l.window())
	if l.RetryAfter != nil && !*l.RetryAfter {
		s += " without Retry-After"
	}
	return s
}

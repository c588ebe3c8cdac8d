package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The real-server tests run the built steady against servers nobody here
// wrote, each started by its test on 127.0.0.1, through a toxiproxy that
// cuts connections, and check that every row arrives exactly once.

// findProgram returns the program a real-server test needs: the path in
// the environment variable env, else the first of paths that exists, else
// name on the PATH. A missing program fails the test under CI=true (where
// .ci/run installs it, the named script saying how) and skips it elsewhere.
func findProgram(t *testing.T, env, name, install string, paths ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real server")
	}
	if p := os.Getenv(env); p != "" {
		return p
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (%s); .ci/run installs it", name, install)
	}
	t.Skipf("%s is not installed (%s); skipping outside CI", name, install)
	return ""
}

// cacheBin is where the .ci/deps scripts put a program they build.
func cacheBin(name string) string {
	dir := os.Getenv("STEADY_CI_CACHE")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".cache", "steady-ci")
	}
	return filepath.Join(dir, "bin", name)
}

// freeAddr returns a loopback host:port that was free a moment ago, for a
// server that takes its port as a flag.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// child is a server process started by a test and stopped when it ends.
type child struct {
	name   string
	cmd    *exec.Cmd
	out    *tail
	exited chan struct{}
	err    error
}

// tail keeps the last 16 KiB a process wrote, for failure messages.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > 16<<10 {
		w.b = w.b[len(w.b)-16<<10:]
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}

// startChild starts cmd, stops it (SIGTERM, then SIGKILL after 5s) when
// the test ends, and waits until ready answers true, failing the test if
// the process exits first or 60s pass.
func startChild(t *testing.T, name string, cmd *exec.Cmd, ready func() bool) *child {
	t.Helper()
	c := &child{name: name, cmd: cmd, out: &tail{}, exited: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = c.out
	}
	cmd.Stderr = c.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(c.stop)
	deadline := time.Now().Add(60 * time.Second)
	for !ready() {
		select {
		case <-c.exited:
			t.Fatalf("%s exited before it answered (%v):\n%s", name, c.err, c.out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer within 60s:\n%s", name, c.out)
		}
	}
	return c
}

func (c *child) stop() {
	pgid := c.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.exited
	}
}

// answers reports whether a GET of url is answered with want.
func answers(url string, want int) func() bool {
	return func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode == want
	}
}

// cutter is one toxiproxy proxy in front of a server: heal lets every
// byte through, cut closes each connection after a number of bytes sent to
// the client, so that a page in flight is cut mid-body and the connection
// with it.
type cutter struct {
	api, name string
	addr      string // host:port steady is pointed at
}

var (
	toxiOnce sync.Once
	toxiPath string
	toxiErr  error
)

// toxiproxyBinary builds the toxiproxy server that the faults module pins
// (its go.mod's tool), beside the steady binary, once per test process.
func toxiproxyBinary(t *testing.T) string {
	t.Helper()
	steady := binary(t)
	toxiOnce.Do(func() {
		toxiPath = filepath.Join(filepath.Dir(steady), "toxiproxy-server")
		cmd := exec.Command("go", "build", "-o", toxiPath, "github.com/Shopify/toxiproxy/v2/cmd/server")
		cmd.Dir = filepath.Join("..", "..", "faults")
		if out, err := cmd.CombinedOutput(); err != nil {
			toxiErr = fmt.Errorf("building toxiproxy from the faults module: %v\n%s", err, out)
		}
	})
	if toxiErr != nil {
		t.Fatal(toxiErr)
	}
	return toxiPath
}

// newCutter starts a toxiproxy server for the test and a proxy in it to
// upstream, healed.
func newCutter(t *testing.T, upstream string) *cutter {
	t.Helper()
	bin := toxiproxyBinary(t)
	api := freeAddr(t)
	host, port, _ := net.SplitHostPort(api)
	cmd := exec.Command(bin, "-host", host, "-port", port)
	cmd.Env = append(os.Environ(), "LOG_LEVEL=error")
	startChild(t, "toxiproxy", cmd, answers("http://"+api+"/version", http.StatusOK))
	c := &cutter{api: "http://" + api, name: "server"}
	var got struct{ Listen string }
	c.call(t, http.MethodPost, "/proxies", map[string]any{"name": c.name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}, &got)
	if got.Listen == "" {
		t.Fatal("toxiproxy gave the proxy no address")
	}
	c.addr = got.Listen
	return c
}

// cut closes a connection once it has carried bytes to the client: every
// connection, or the share toxicity of them.
func (c *cutter) cut(t *testing.T, bytes int, toxicity float64) {
	t.Helper()
	c.call(t, http.MethodPost, "/proxies/"+c.name+"/toxics", map[string]any{"name": "cut", "type": "limit_data",
		"stream": "downstream", "toxicity": toxicity, "attributes": map[string]int{"bytes": bytes}}, nil)
}

func (c *cutter) heal(t *testing.T) {
	t.Helper()
	c.call(t, http.MethodDelete, "/proxies/"+c.name+"/toxics/cut", nil, nil)
}

func (c *cutter) call(t *testing.T, method, path string, body, into any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.api+path, r)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("toxiproxy %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		t.Fatalf("toxiproxy %s %s: %s %s", method, path, res.Status, b)
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("toxiproxy %s %s: %v: %s", method, path, err, b)
		}
	}
}

// harvested is one run of steady harvest into a file.
type harvested struct {
	out     []byte // the published file
	stderr  string
	retries int // attempts that failed and were re-sent (-v lines)
	elapsed time.Duration
}

// runHarvest runs the built steady harvest -v URL -o FILE with args and
// fails the test unless it exits 0.
func runHarvest(t *testing.T, url string, args ...string) harvested {
	t.Helper()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	argv := append([]string{"harvest", "-v", url, "-o", out}, args...)
	cmd := exec.CommandContext(ctx, binary(t), argv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	h := harvested{stderr: stderr.String(), elapsed: time.Since(start)}
	if err != nil {
		t.Fatalf("steady %s: %v\n%s", strings.Join(argv, " "), err, lastLines(h.stderr, 30))
	}
	if h.out, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(h.stderr, "\n") {
		if strings.HasPrefix(line, "attempt ") && strings.Contains(line, ", retry in ") {
			h.retries++
		}
	}
	t.Logf("steady harvest %s: %d bytes, %d retries, %v", strings.Join(args, " "), len(h.out), h.retries, h.elapsed.Round(time.Millisecond))
	return h
}

// jsonlIDs reads a JSONL output and returns each line's id (the field
// named key, a JSON string or number, as text), failing the test on a line
// that is not a JSON object with one.
func jsonlIDs(t *testing.T, out []byte, key string) []string {
	t.Helper()
	var ids []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var row map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("line %d is not a JSON object: %v: %.200s", len(ids)+1, err, sc.Bytes())
		}
		raw, ok := row[key]
		if !ok {
			t.Fatalf("line %d has no %q: %.200s", len(ids)+1, key, sc.Bytes())
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		ids = append(ids, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkOnce fails unless ids holds each of want exactly once, in want's
// order when ordered.
func checkOnce(t *testing.T, what string, ids, want []string, ordered bool) {
	t.Helper()
	seen := make(map[string]int, len(ids))
	for _, id := range ids {
		seen[id]++
	}
	var dups, missing []string
	for id, n := range seen {
		if n > 1 {
			dups = append(dups, id)
		}
	}
	for _, id := range want {
		if seen[id] == 0 {
			missing = append(missing, id)
		}
	}
	if len(ids) != len(want) || len(dups) > 0 || len(missing) > 0 {
		t.Fatalf("%s: %d rows, want %d; %d ids more than once (%.80v), %d missing (%.80v)", what, len(ids), len(want), len(dups), dups, len(missing), missing)
	}
	if ordered {
		for i := range ids {
			if ids[i] != want[i] {
				t.Fatalf("%s: row %d is id %s, want %s", what, i+1, ids[i], want[i])
			}
		}
	}
}

// sameFile fails unless got is byte for byte the reference output.
func sameFile(t *testing.T, what string, got, ref []byte) {
	t.Helper()
	if !bytes.Equal(got, ref) {
		t.Fatalf("%s: %d bytes, sha256 %x; the uncut run wrote %d bytes, sha256 %x", what, len(got), sha256.Sum256(got), len(ref), sha256.Sum256(ref))
	}
}

// seqIDs is "from".."to" as text.
func seqIDs(from, to int) []string {
	out := make([]string, 0, to-from+1)
	for i := from; i <= to; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

// harvestCut checks one server the way every real-server test does: an
// uncut run with explicit flags (the proxy healed, as newCutter leaves it)
// is the reference, whose rows check verifies; then --pages auto and the
// explicit flags run again with connections cut mid-answer, and each must
// write the reference file byte for byte after at least one retry.
//
// A server that keeps connections open has every connection cut in its
// second answer (after one and a half times the first page's bytes on the
// wire): a fresh connection always delivers its first answer whole, and
// the runs hold four connections, so a request meets at most four spent
// ones before a fresh one; ten retries cover that. A server that closes
// each connection after one answer has half its connections cut halfway
// through the first page, chosen at random by toxiproxy; thirty retries
// make a page that is cut every time a chance of 2^-31.
//
// probe holds headers ("Name: value") that make a GET of url the first page
// the walks ask for, when the URL alone does not.
func harvestCut(t *testing.T, c *cutter, url string, explicit []string, check func(out []byte), probe ...string) {
	t.Helper()
	ref := runHarvest(t, url, explicit...)
	check(ref.out)
	size, closes := wireBytes(t, url, probe)
	retries := "10"
	if closes {
		c.cut(t, size/2, 0.5)
		retries = "30"
	} else {
		c.cut(t, size*3/2, 1)
	}
	for _, run := range []struct {
		name string
		args []string
	}{{"--pages auto, cut", nil}, {"explicit, cut", explicit}} {
		h := runHarvest(t, url, append(run.args, "--concurrent", "4", "--retries", retries)...)
		sameFile(t, run.name, h.out, ref.out)
		if h.retries == 0 {
			t.Errorf("%s: no attempt was cut; the toxic did not bite:\n%s", run.name, lastLines(h.stderr, 10))
		}
	}
	c.heal(t)
}

// wireBytes is the size of the answer to a GET of url as it crosses the
// wire to steady: status line, headers and body, gzip accepted as steady
// accepts it; closes says the server closes the connection after it.
func wireBytes(t *testing.T, url string, headers []string) (size int, closes bool) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	if err := res.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Len(), res.Close
}

func splitAddr(t *testing.T, addr string) (host, port string, n int) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ = strconv.Atoi(port)
	return host, port, n
}

// splitLines is out's lines without their newlines.
func splitLines(out []byte) [][]byte {
	if len(out) == 0 {
		return nil
	}
	return bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
}

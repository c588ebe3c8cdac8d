package faults_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
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

// nginxServer is Debian's nginx serving one directory on a loopback port,
// started by the test with its own prefix and configuration, with real
// ETag, Last-Modified, Range and If-Range handling.
type nginxServer struct {
	addr   string // host:port
	dir    string
	cmd    *exec.Cmd
	out    *tailBuffer
	exited chan struct{}
	err    error
}

// startNginx serves root on a free loopback port until the test ends. An
// absent nginx fails the test under CI and skips it elsewhere.
func startNginx(t testing.TB, root string) *nginxServer {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
				break
			}
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("nginx is not installed (apt-get install -y nginx-light); .ci/run installs it")
		}
		t.Skip("nginx is not installed (apt-get install -y nginx-light); skipping outside CI")
	}
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &nginxServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir,
		out: &tailBuffer{max: 16 << 10}, exited: make(chan struct{})}
	// One process, in the foreground, as the user running the test (no
	// master, so no switch to an unprivileged user that could not read
	// the test's files); every path inside dir.
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 256; }
http {
	access_log %[1]s/access.log;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	sendfile on;
	keepalive_requests 100000;
	server {
		listen %[2]s;
		root %[3]s;
		default_type application/octet-stream;
	}
}
`, dir, s.addr, root)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(bin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	dieWithParent(s.cmd)
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting nginx: %v", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.stop)
	if err := s.await(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	return s
}

// await polls until nginx accepts connections, it exits, or limit passes.
func (s *nginxServer) await(limit time.Duration) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			return fmt.Errorf("nginx exited before it listened (%v):\n%s\n%s", s.err, s.out, log)
		case <-deadline.C:
			return fmt.Errorf("nginx did not listen on %s within %v:\n%s", s.addr, limit, s.out)
		case <-tick.C:
		}
	}
}

// stop ends nginx (SIGQUIT is its graceful stop; SIGKILL after 5 s).
func (s *nginxServer) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	grace := time.NewTimer(5 * time.Second)
	defer grace.Stop()
	select {
	case <-s.exited:
	case <-grace.C:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// requests stops nginx, so that every request it answered is logged, and
// returns the access log's lines that name path, one a request.
func (s *nginxServer) requests(t testing.TB, path string) []string {
	t.Helper()
	var lines []string
	for _, l := range s.accessLog(t) {
		if strings.Contains(l, " "+path+" ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// accessLog stops nginx and returns every line of its access log.
func (s *nginxServer) accessLog(t testing.TB) []string {
	t.Helper()
	s.stop()
	f, err := os.Open(filepath.Join(s.dir, "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// The generated files are shared by the tests and benchmarks of one run.
var (
	filesMu  sync.Mutex
	files    = map[int64]*servedFile{}
	filesDir string
)

// servedFile is a generated file of pseudo-random bytes and its digest.
type servedFile struct {
	name string
	path string
	size int64
	sum  [32]byte
}

// generated returns a file of size bytes in the directory the nginx of
// this run serves, writing it on first use.
func generated(t testing.TB, size int64) *servedFile {
	t.Helper()
	filesMu.Lock()
	defer filesMu.Unlock()
	if f, ok := files[size]; ok {
		return f
	}
	if filesDir == "" {
		d, err := os.MkdirTemp("", "steady-served-")
		if err != nil {
			t.Fatal(err)
		}
		filesDir = d
	}
	f := &servedFile{name: "blob-" + strconv.FormatInt(size, 10), size: size}
	f.path = filepath.Join(filesDir, f.name)
	out, err := os.Create(f.path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	var seed [32]byte
	seed[0] = byte(size >> 20)
	if _, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(rand.NewChaCha8(seed), size)); err != nil {
		t.Fatal(err)
	}
	// Written back now, so that no download reads it while the kernel is
	// still writing a gigabyte of it to the disk.
	if err := out.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	copy(f.sum[:], h.Sum(nil))
	files[size] = f
	return f
}

// removeGenerated deletes the generated files (TestMain calls it).
func removeGenerated() {
	filesMu.Lock()
	defer filesMu.Unlock()
	if filesDir != "" {
		os.RemoveAll(filesDir)
	}
}

// countingConn counts the bytes read from a connection: what the client
// received on the wire, headers included.
type countingConn struct {
	net.Conn
	n *atomicCounter
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.add(int64(n))
	return n, err
}

type atomicCounter struct {
	mu sync.Mutex
	v  int64
}

func (a *atomicCounter) add(n int64) { a.mu.Lock(); a.v += n; a.mu.Unlock() }
func (a *atomicCounter) load() int64 { a.mu.Lock(); defer a.mu.Unlock(); return a.v }

// countingTransport is a loopback transport whose connections count what
// they receive.
func countingTransport(n *atomicCounter) *http.Transport {
	d := &net.Dialer{Timeout: time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: c, n: n}, nil
		},
		ResponseHeaderTimeout: 5 * time.Second,
	}
}

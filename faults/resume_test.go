package faults_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	steady "github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/retry"
)

// resumeOptions are loopback settings for downloads: the timeouts guard
// against a dead peer only (loopback answers in microseconds), and a cut
// connection is re-sent after at most a few milliseconds.
func resumeOptions(tr http.RoundTripper) steady.Options {
	return steady.Options{
		Transport: tr,
		Policy: retry.Policy{
			MaxAttempts:    10,
			InitialBackoff: 2 * time.Millisecond,
			MaxBackoff:     20 * time.Millisecond,
			StallTimeout:   10 * time.Second,
			ReadTimeout:    5 * time.Second,
		},
	}
}

// cutProxy is a toxiproxy proxy to upstream that closes every connection
// after limit bytes (0: no toxic).
func cutProxy(t testing.TB, name, upstream string, limit int64) *toxiproxy.Proxy {
	t.Helper()
	p, err := toxiproxyClient(t).CreateProxy(name, "127.0.0.1:0", upstream)
	if err != nil {
		t.Fatalf("creating the proxy: %v", err)
	}
	t.Cleanup(func() { p.Delete() })
	if limit > 0 {
		if _, err := p.AddToxic("limit_data", "limit_data", "downstream", 1, toxiproxy.Attributes{"bytes": limit}); err != nil {
			t.Fatalf("adding limit_data: %v", err)
		}
	}
	return p
}

// fetchResult is one download's evidence.
type fetchResult struct {
	sum      [32]byte
	n        int64 // body bytes
	wire     int64 // bytes received on the wire
	resumes  int
	attempts int
	waited   time.Duration // backoffs slept before continuations
	alloc    uint64        // bytes allocated during the download
	took     time.Duration
	cpu      time.Duration // CPU time of this process (user and system) during it
	conns    []connTimes   // each connection's timeline, in the order dialed
}

// cpuTime is the CPU time this process has used so far. On a loaded
// machine it measures the client's own work where wall time swings.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fetch downloads url with steady and the loopback options of the tests
// into w (nil: only hashed).
func fetch(t testing.TB, url string, w io.Writer) fetchResult {
	t.Helper()
	return fetchWith(t, url, w, resumeOptions)
}

// fetchWith downloads url with steady configured by options, recording
// each connection's timeline.
func fetchWith(t testing.TB, url string, w io.Writer, options func(http.RoundTripper) steady.Options) fetchResult {
	t.Helper()
	var wire atomicCounter
	log := &connLog{}
	tr := countingTransport(&wire)
	tr.DialContext = log.dialer(tr.DialContext)
	defer tr.CloseIdleConnections()
	cl, err := steady.New(options(tr))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	start := time.Now()
	ctx, out := retry.WithOutcome(httptrace.WithClientTrace(context.Background(), log.trace()))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := cl.HTTP().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	dst := io.Writer(h)
	if w != nil {
		dst = io.MultiWriter(w, h)
	}
	n, err := io.Copy(dst, resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("download of %s ended after %d bytes: %v", url, n, err)
	}
	r := fetchResult{n: n, wire: wire.load(), resumes: out.Resumes, attempts: out.Attempts, waited: out.Waited,
		alloc: after.TotalAlloc - before.TotalAlloc, took: took, cpu: cpu, conns: log.snapshot()}
	copy(r.sum[:], h.Sum(nil))
	return r
}

// connTimes is one connection's timeline as the client saw it.
type connTimes struct {
	dial      time.Time // the transport asked for a connection
	wrote     time.Time // the request was written on it
	firstByte time.Time // the response's first byte arrived
	at8M      time.Time // 8 MiB had arrived on it
	at16M     time.Time // 16 MiB had arrived on it
	lastData  time.Time // the last read that brought bytes
	broke     time.Time // a read on it failed (the cut, seen by the client)
	n         int64
}

// connLog records the timeline of every connection of one download. The
// download's requests are sequential, so the trace's events belong to the
// connection dialed last.
type connLog struct {
	mu    sync.Mutex
	conns []connTimes
}

func (l *connLog) dialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		l.mu.Lock()
		i := len(l.conns)
		l.conns = append(l.conns, connTimes{dial: time.Now()})
		l.mu.Unlock()
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return loggedConn{Conn: c, l: l, i: i}, nil
	}
}

func (l *connLog) trace() *httptrace.ClientTrace {
	last := func(f func(c *connTimes)) {
		l.mu.Lock()
		if len(l.conns) > 0 {
			f(&l.conns[len(l.conns)-1])
		}
		l.mu.Unlock()
	}
	return &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { last(func(c *connTimes) { c.wrote = time.Now() }) },
		GotFirstResponseByte: func() { last(func(c *connTimes) { c.firstByte = time.Now() }) },
	}
}

func (l *connLog) snapshot() []connTimes {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.conns)
}

// loggedConn stamps the connection's timeline as its bytes arrive.
type loggedConn struct {
	net.Conn
	l *connLog
	i int
}

func (c loggedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	now := time.Now()
	c.l.mu.Lock()
	ct := &c.l.conns[c.i]
	prev := ct.n
	ct.n += int64(n)
	if n > 0 {
		ct.lastData = now
	}
	if prev < 8<<20 && ct.n >= 8<<20 {
		ct.at8M = now
	}
	if prev < 16<<20 && ct.n >= 16<<20 {
		ct.at16M = now
	}
	if err != nil && ct.broke.IsZero() {
		ct.broke = now
	}
	c.l.mu.Unlock()
	return n, err
}

// resumeCosts is what each continuation of a download cost, in
// milliseconds, split where the client can see it.
type resumeCosts struct {
	// close: from the last bytes of the cut connection to the read that
	// failed on it (whether the proxy closes at its limit or lets the
	// client wait).
	close []float64
	// client: from that failed read to the request written on a new
	// connection (steady's bookkeeping and any backoff, the dial).
	client []float64
	// proxy: from the request written to the first byte of the answer
	// (toxiproxy's accept and its own dial, nginx, both ways through it).
	proxy []float64
	// ramp: how much longer the new connection's first 8 MiB took than
	// its next 8 MiB (a slow start; negative: none).
	ramp []float64
}

// add splits the continuations of one download's connections.
func (rc *resumeCosts) add(conns []connTimes) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for i := 1; i < len(conns); i++ {
		c, prev := conns[i], conns[i-1]
		if prev.broke.IsZero() || c.wrote.IsZero() || c.firstByte.IsZero() {
			continue
		}
		rc.close = append(rc.close, ms(prev.broke.Sub(prev.lastData)))
		rc.client = append(rc.client, ms(c.wrote.Sub(prev.broke)))
		rc.proxy = append(rc.proxy, ms(c.firstByte.Sub(c.wrote)))
		if !c.at16M.IsZero() {
			rc.ramp = append(rc.ramp, ms(c.at8M.Sub(c.firstByte)-c.at16M.Sub(c.at8M)))
		}
	}
}

// A 64 MiB file from nginx through a proxy that cuts every connection after
// 8 MiB: only a client that resumes can finish. The file arrives byte for
// byte, with the fewest requests the cut allows, about its own size on the
// wire, and memory that grows with the connections, not with the bytes.
func TestResumeFromNginxThroughLimitData(t *testing.T) {
	const size, limit = 64 << 20, 8 << 20
	f := generated(t, size)
	ngx := startNginx(t, filesDir)
	p := cutProxy(t, "resume-limit-data", ngx.addr, limit)
	r := fetch(t, "http://"+p.Listen+"/"+f.name, nil)
	if r.sum != f.sum || r.n != size {
		t.Fatalf("got %d bytes with another sha256; want the %d served, identical", r.n, size)
	}
	reqs := ngx.requests(t, "/"+f.name)
	// Each connection carries limit bytes, headers (a few hundred bytes)
	// included, so one more than size/limit is the minimum.
	minimum := size/limit + 1
	if len(reqs) > minimum {
		t.Errorf("%d requests for a %d MiB file cut every %d MiB; the minimum is %d", len(reqs), size>>20, limit>>20, minimum)
	}
	if r.resumes != len(reqs)-1 || r.attempts != len(reqs) {
		t.Errorf("outcome: %d resumes, %d attempts; nginx saw %d requests", r.resumes, r.attempts, len(reqs))
	}
	// Every cut followed 8 MiB of new bytes: each continuation is sent at
	// once (ADR 220).
	if r.waited != 0 {
		t.Errorf("the continuations waited %v in backoffs; a break after a MiB of progress is continued at once", r.waited)
	}
	for i, line := range reqs[1:] {
		if !strings.Contains(line, " 206 ") {
			t.Errorf("continuation %d was not answered 206: %s", i+1, line)
		}
	}
	if r.wire > size+size/100 {
		t.Errorf("%d bytes on the wire for %d; want at most 1%% more", r.wire, size)
	}
	// What a download allocates is per connection (about 20 KB: the
	// request, its headers, net/http's connection and buffers), none of it
	// per byte: 64 KiB a request is three times that, and a hundredth of
	// the file's size for the nine.
	if perReq := 64 << 10; r.alloc > uint64(perReq*len(reqs)) {
		t.Errorf("the download allocated %d bytes for %d requests, over %d a request; memory must not grow with the %d-byte file",
			r.alloc, len(reqs), perReq, size)
	}
}

// The same download with steady get -o: the command's file is the served
// file, and so after a kill -9 and the same command again.
func TestGetFromNginxKillAndRunAgain(t *testing.T) {
	const size = 64 << 20
	f := generated(t, size)
	ngx := startNginx(t, filesDir)
	// A cut and slowed proxy (toxiproxy's rate is in KB/s: 32 MB/s), so
	// the command is mid-way when it is killed.
	p := cutProxy(t, "resume-get-kill", ngx.addr, 8<<20)
	if _, err := p.AddToxic("bandwidth", "bandwidth", "downstream", 1, toxiproxy.Attributes{"rate": 32 << 10}); err != nil {
		t.Fatal(err)
	}
	bin := buildSteady(t)
	out := filepath.Join(t.TempDir(), "blob")
	args := []string{"get", "-q", "http://" + p.Listen + "/" + f.name, "-o", out}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if st, err := os.Stat(out + ".partial"); err == nil && st.Size() >= 3<<20 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the command wrote no 3 MiB within 60s")
		}
		time.Sleep(10 * time.Millisecond) // polling a file another process writes; not a timing assertion
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := p.RemoveToxic("bandwidth"); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(bin, append(args, "--sha256", fmt.Sprintf("%x", f.sum))...).CombinedOutput(); err != nil {
		t.Fatalf("the same command again: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(got) != f.sum {
		t.Fatal("the file after kill -9 and a second run is not the served file")
	}
	reqs := ngx.requests(t, "/"+f.name)
	if len(reqs) > 2+size/(8<<20)+1 {
		t.Errorf("%d requests; want about one per 8 MiB cut and one for the restart", len(reqs))
	}
	whole := 0
	for _, line := range reqs {
		if strings.Contains(line, " 200 ") {
			whole++
		}
	}
	if whole != 1 {
		t.Errorf("%d answers of the whole file; want 1: the second run must continue the partial, not start again", whole)
	}
}

// buildSteady builds the command from the repository's root, where go.work
// ties its module to the work tree's core.
func buildSteady(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "steady")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/steady")
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building steady: %v\n%s", err, b)
	}
	return bin
}

// curlResume downloads url to path with curl -C - in a loop, as a user
// scripts it: each run continues the file; the loop ends when curl
// succeeds. It returns the runs, the bytes curl received, its CPU time,
// and for each run after the first what the continuation cost in
// milliseconds: the process's start and exit (the run's wall time less
// curl's own time_total) and curl's time to the answer's first byte.
func curlResume(b *testing.B, url, path string) (runs int, wire int64, cpu time.Duration, costs []float64) {
	b.Helper()
	for runs = 1; runs <= 100; runs++ {
		cmd := exec.Command("curl", "-sS", "-C", "-", "-o", path, "-w", "%{size_download} %{size_header} %{time_starttransfer} %{time_total}", url)
		cmd.Env = append(os.Environ(), "LC_ALL=C") // a decimal point in the times
		start := time.Now()
		out, err := cmd.Output()
		wall := time.Since(start).Seconds()
		if cmd.ProcessState != nil {
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		if f := strings.Fields(string(out)); len(f) == 4 {
			body, _ := strconv.ParseInt(f[0], 10, 64)
			head, _ := strconv.ParseInt(f[1], 10, 64)
			wire += body + head
			first, err1 := strconv.ParseFloat(f[2], 64)
			total, err2 := strconv.ParseFloat(f[3], 64)
			if runs > 1 && err1 == nil && err2 == nil {
				costs = append(costs, 1000*(wall-total+first))
			}
		}
		if err == nil {
			return runs, wire, cpu, costs
		}
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 18 { // 18: partial file
			b.Fatalf("curl: %v", err)
		}
	}
	b.Fatal("curl did not finish in 100 runs")
	return 0, 0, 0, nil
}

// benchOptions is steady as a user gets it: the default policy (backoff,
// timeouts, attempts) over the benchmark's counting transport.
func benchOptions(tr http.RoundTripper) steady.Options { return steady.Options{Transport: tr} }

// outputDir is where the benchmark's downloads are written: a directory
// of its own in memory (/dev/shm) when there is one, so that neither
// steady's file nor curl's waits for the disk's write-back of the
// gigabytes written before it; else the test's temporary directory.
func outputDir(b *testing.B) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "steady-bench-"); err == nil {
			b.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	b.Log("no /dev/shm: the downloads are written to disk, and its write-back moves the times")
	return b.TempDir()
}

// fileSum is the sha256 of the file at path, read in pieces.
func fileSum(path string) ([32]byte, error) {
	var s [32]byte
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return s, err
	}
	copy(s[:], h.Sum(nil))
	return s, nil
}

// pieces downloads url into w with plain net/http as n Range requests of
// cut bytes each, every one on a new connection and none of them broken:
// what the cut download's connections cost without a cut or a resume.
func pieces(b *testing.B, url string, size, cut int64, w io.Writer) (took time.Duration, sum [32]byte) {
	b.Helper()
	tr := &http.Transport{DisableKeepAlives: true, ResponseHeaderTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	h := sha256.New()
	dst := io.MultiWriter(w, h)
	start := time.Now()
	for off := int64(0); off < size; off += cut {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(min(off+cut, size)-1, 10))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(dst, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusPartialContent {
			b.Fatalf("piece at %d: %d, %v", off, resp.StatusCode, err)
		}
	}
	took = time.Since(start)
	copy(sum[:], h.Sum(nil))
	return took, sum
}

// BenchmarkResumeDownload: a large file from nginx through toxiproxy, cut
// every 64 MiB, against the same download with no toxic, and curl -C - in a
// retry loop on the cut proxy. "toxic-no-cut" is the same toxic with a limit
// past the file, the cost of toxiproxy's relaying alone; "pieces" fetches
// the file through that toxic as uncut Range requests of 64 MiB on new
// connections with plain net/http, what the cut download's connections cost
// without a cut or a resume. steady runs with its default policy; every
// contender writes the body to a file in memory (see outputDir), removed
// after its run. Each b.Loop round runs every contender once, interleaved;
// medians are reported, and each continuation's cost split into the
// proxy's close, the client's part, the proxy's answer and the new
// connection's ramp (resumeCosts), beside curl's. The size is
// RESUME_BENCH_MB (default 512); bench/figures.sh runs 5 rounds of 1024,
// each contender once in every position.
func BenchmarkResumeDownload(b *testing.B) {
	size := int64(512) << 20
	if v := os.Getenv("RESUME_BENCH_MB"); v != "" {
		mb, err := strconv.ParseInt(v, 10, 64)
		if err != nil || mb <= 0 {
			b.Fatalf("RESUME_BENCH_MB=%q", v)
		}
		size = mb << 20
	}
	const cut = 64 << 20
	f := generated(b, size)
	ngx := startNginx(b, filesDir)
	uncut := cutProxy(b, "bench-uncut", ngx.addr, 0)
	cutp := cutProxy(b, "bench-cut", ngx.addr, cut)
	// The same toxic with a limit past the file's size: what the toxic's
	// own relaying costs, without a single cut.
	idle := cutProxy(b, "bench-toxic-no-cut", ngx.addr, 2*size)
	dir := outputDir(b)
	var tUncut, tIdle, tPieces, tCut, tCurl, wCut, wCurl, aCut, cUncut, cCut, cCurl []float64
	var costs resumeCosts
	var curlCost []float64
	var resumes int
	// The servers' CPU time during each contender's run (toxiproxy, nginx;
	// both are children of this process, which measures only itself).
	servers := func() (tp, ng time.Duration, ok bool) {
		tp, ok1 := processCPU(toxi.cmd.Process.Pid)
		ng, ok2 := processCPU(ngx.cmd.Process.Pid)
		return tp, ng, ok1 && ok2
	}
	type serverCPU struct{ toxiproxy, nginx []float64 }
	srv := map[string]*serverCPU{"uncut": {}, "idle": {}, "pieces": {}, "cut": {}, "curl": {}}
	measured := func(name string, run func()) func() {
		return func() {
			tp0, ng0, ok0 := servers()
			run()
			if tp1, ng1, ok1 := servers(); ok0 && ok1 {
				s := srv[name]
				s.toxiproxy = append(s.toxiproxy, (tp1 - tp0).Seconds())
				s.nginx = append(s.nginx, (ng1 - ng0).Seconds())
			}
		}
	}
	steadyRun := func(name string, p *toxiproxy.Proxy) fetchResult {
		path := filepath.Join(dir, name)
		w, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		r := fetchWith(b, "http://"+p.Listen+"/"+f.name+"?c="+name, w, benchOptions)
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		os.Remove(path)
		if r.sum != f.sum {
			b.Fatalf("%s: the download differs", name)
		}
		return r
	}
	contenders := []func(){
		measured("uncut", func() {
			r := steadyRun("uncut", uncut)
			tUncut = append(tUncut, r.took.Seconds())
			cUncut = append(cUncut, r.cpu.Seconds())
		}),
		measured("idle", func() {
			r := steadyRun("idle", idle)
			if r.resumes != 0 {
				b.Fatal("the toxic without a cut cut the download")
			}
			tIdle = append(tIdle, r.took.Seconds())
		}),
		measured("pieces", func() {
			path := filepath.Join(dir, "pieces")
			w, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			took, sum := pieces(b, "http://"+idle.Listen+"/"+f.name+"?c=pieces", size, cut, w)
			w.Close()
			os.Remove(path)
			if sum != f.sum {
				b.Fatal("the pieces differ from the file")
			}
			tPieces = append(tPieces, took.Seconds())
		}),
		measured("cut", func() {
			r := steadyRun("cut", cutp)
			tCut = append(tCut, r.took.Seconds())
			cCut = append(cCut, r.cpu.Seconds())
			wCut = append(wCut, float64(r.wire)/float64(size))
			aCut = append(aCut, float64(r.alloc))
			resumes = r.resumes
			costs.add(r.conns)
		}),
		measured("curl", func() {
			path := filepath.Join(dir, "curl")
			os.Remove(path)
			start := time.Now()
			_, wire, cpu, costs := curlResume(b, "http://"+cutp.Listen+"/"+f.name+"?c=curl", path)
			tCurl = append(tCurl, time.Since(start).Seconds())
			cCurl = append(cCurl, cpu.Seconds())
			wCurl = append(wCurl, float64(wire)/float64(size))
			curlCost = append(curlCost, costs...)
			sum, err := fileSum(path)
			os.Remove(path)
			if err != nil || sum != f.sum {
				b.Fatalf("curl's file differs (%v)", err)
			}
		}),
	}
	for round := 0; b.Loop(); round++ {
		// Each round starts with the next contender, so that none always
		// runs right after another.
		for i := range contenders {
			contenders[(round+i)%len(contenders)]()
		}
	}
	// What nginx sent for each contender, from its access log (the query
	// names the contender): a cut connection's bytes still in the sockets
	// between nginx and toxiproxy when the proxy closes never reach the
	// client, and nginx sends them again.
	sent := map[string]int64{}
	for _, line := range ngx.accessLog(b) {
		_, rest, ok := strings.Cut(line, "?c=")
		if !ok {
			continue
		}
		name, rest, _ := strings.Cut(rest, " ")
		_, rest, _ = strings.Cut(rest, "\" ")
		if f := strings.Fields(rest); len(f) >= 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			sent[name] += n
		}
	}
	rounds := float64(len(tUncut))
	sentRatio := func(name string) float64 { return float64(sent[name]) / rounds / float64(size) }
	mu, mc, mk, mi := median(tUncut), median(tCut), median(tCurl), median(tIdle)
	// The ratios within each round, where the machine's load moves both
	// contenders alike, and what the continuations cost by their own
	// timelines, which the load hardly moves.
	var rCut, rCurl, rPieces, rCutPieces []float64
	for i := range tUncut {
		rCut, rCurl = append(rCut, tCut[i]/tUncut[i]), append(rCurl, tCurl[i]/tUncut[i])
		rPieces, rCutPieces = append(rPieces, tPieces[i]/tUncut[i]), append(rCutPieces, tCut[i]/tPieces[i])
	}
	mp := median(tPieces)
	client, proxy, ramp := costs.client, costs.proxy, costs.ramp
	perResume := median(costs.close) + median(client) + median(proxy) + max(median(ramp), 0)
	b.ReportMetric(mu, "s-uncut")
	b.ReportMetric(mi, "s-toxic-no-cut")
	b.ReportMetric(mc/mi, "cut/toxic-no-cut")
	b.ReportMetric(mp, "s-pieces")
	b.ReportMetric(mp/mu, "pieces/uncut")
	b.ReportMetric(mc/mp, "cut/pieces")
	b.ReportMetric(median(rPieces), "pieces/uncut-in-round")
	b.ReportMetric(median(rCutPieces), "cut/pieces-in-round")
	b.ReportMetric(mc, "s-cut")
	b.ReportMetric(mc/mu, "cut/uncut")
	b.ReportMetric(median(wCut), "wire/size")
	b.ReportMetric(sentRatio("cut"), "nginx-sent/size")
	b.ReportMetric(sentRatio("curl"), "curl-nginx-sent/size")
	b.ReportMetric(sentRatio("uncut"), "uncut-nginx-sent/size")
	b.ReportMetric(mk, "s-curl")
	b.ReportMetric(mk/mu, "curl/uncut")
	b.ReportMetric(median(wCurl), "curl-wire/size")
	b.ReportMetric(median(aCut), "alloc-B")
	b.ReportMetric(float64(resumes), "resumes")
	b.ReportMetric(median(cUncut), "cpu-s-uncut")
	b.ReportMetric(median(cCut), "cpu-s-cut")
	b.ReportMetric(median(cCurl), "cpu-s-curl")
	b.ReportMetric(median(costs.close), "ms-resume-close")
	b.ReportMetric(median(client), "ms-resume-client")
	b.ReportMetric(median(proxy), "ms-resume-proxy")
	b.ReportMetric(median(ramp), "ms-resume-ramp")
	b.ReportMetric(median(curlCost), "ms-resume-curl")
	b.ReportMetric(median(rCut), "cut/uncut-in-round")
	b.ReportMetric(median(rCurl), "curl/uncut-in-round")
	b.ReportMetric(float64(resumes)*perResume/1000/mu, "resumes-cost/uncut")
	b.ReportMetric(median(srv["uncut"].toxiproxy), "cpu-s-toxiproxy-uncut")
	b.ReportMetric(median(srv["idle"].toxiproxy), "cpu-s-toxiproxy-toxic-no-cut")
	b.ReportMetric(median(srv["pieces"].toxiproxy), "cpu-s-toxiproxy-pieces")
	b.ReportMetric(median(srv["cut"].toxiproxy), "cpu-s-toxiproxy-cut")
	b.ReportMetric(median(srv["curl"].toxiproxy), "cpu-s-toxiproxy-curl")
	b.Logf("CPU time of the client (medians): steady uncut %.2fs, steady cut %.2fs (%.3fx), curl loop %.2fs",
		median(cUncut), median(cCut), median(cCut)/median(cUncut), median(cCurl))
	b.Logf("CPU time of the servers (medians, toxiproxy + nginx): uncut %.2f+%.2fs, same toxic without a cut %.2f+%.2fs, %d pieces %.2f+%.2fs, steady cut %.2f+%.2fs, curl loop %.2f+%.2fs",
		median(srv["uncut"].toxiproxy), median(srv["uncut"].nginx), median(srv["idle"].toxiproxy), median(srv["idle"].nginx),
		(size+cut-1)/cut, median(srv["pieces"].toxiproxy), median(srv["pieces"].nginx),
		median(srv["cut"].toxiproxy), median(srv["cut"].nginx), median(srv["curl"].toxiproxy), median(srv["curl"].nginx))
	b.Logf("each continuation (medians of %d): the cut seen %.2f ms after the last byte (max %.2f); steady %.2f ms from the cut seen to the request written (max %.2f), %.2f ms to the first byte through the proxy (max %.2f), ramp of the new connection %.2f ms; curl -C - %.2f ms from its run's start and exit to the first byte (max %.2f)",
		len(client), median(costs.close), slices.Max(append(costs.close, 0)), median(client), slices.Max(append(client, 0)), median(proxy), slices.Max(append(proxy, 0)), median(ramp), median(curlCost), slices.Max(append(curlCost, 0)))
	b.Logf("%d continuations at %.2f ms each (close, client, proxy and ramp) are %.0f ms, %.3f of the uncut download's time; the ratios within each round (medians): steady cut %.3fx, curl %.3fx",
		resumes, perResume, float64(resumes)*perResume, float64(resumes)*perResume/1000/mu, median(rCut), median(rCurl))
	b.Logf("nginx sent (means over the rounds, against the size): steady uncut %.4fx, steady cut %.4fx, curl loop %.4fx, pieces %.4fx; the excess is what the cut connections held in their sockets when toxiproxy closed them",
		sentRatio("uncut"), sentRatio("cut"), sentRatio("curl"), sentRatio("pieces"))
	b.Logf("the same file as %d Range requests of %d MiB on new connections through the toxic, none cut (plain net/http): %.2fs, %.3fx uncut (%.3fx within a round); steady cut against them %.3fx (%.3fx within a round)",
		(size+cut-1)/cut, cut>>20, mp, mp/mu, median(rPieces), mc/mp, median(rCutPieces))
	b.Logf("%d MiB cut every %d MiB, %d rounds (medians): uncut %.2fs, same toxic without a cut %.2fs, steady cut %.2fs (%.3fx uncut, %.3fx toxic without cut; wire %.4fx size; %d resumes; %.0f B allocated), curl -C - loop %.2fs (%.3fx uncut, wire %.4fx)",
		size>>20, cut>>20, len(tUncut), mu, mi, mc, mc/mu, mc/mi, median(wCut), resumes, median(aCut), mk, mk/mu, median(wCurl))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

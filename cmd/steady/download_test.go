package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// origin serves one file with http.ServeContent (real Range, If-Range and
// ETag handling). Each answer's connection is cut after cut bytes of body
// (0: never); drip slows every answer to chunks of 16 KB every few
// milliseconds, so a process can be killed mid-way.
type origin struct {
	mu     sync.Mutex
	data   []byte
	etag   string
	cut    int
	drip   bool
	ranges []string // the Range header of each request, "" for none
}

func newOrigin(t *testing.T, size int, cut int, drip bool) (*origin, *httptest.Server) {
	o := &origin{data: randomBytes(size, 1), etag: `"e1"`, cut: cut, drip: drip}
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	return o, srv
}

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.ranges = append(o.ranges, r.Header.Get("Range"))
	data, etag, cut, drip := o.data, o.etag, o.cut, o.drip
	o.mu.Unlock()
	w.Header().Set("Etag", etag)
	var cw http.ResponseWriter = w
	if cut > 0 || drip {
		cw = &limitWriter{ResponseWriter: w, left: cut, drip: drip}
	}
	http.ServeContent(cw, r, "file", time.Time{}, bytes.NewReader(data))
}

func (o *origin) requests() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.ranges...)
}

func (o *origin) set(data []byte, etag string, cut int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.data, o.etag, o.cut = data, etag, cut
}

// limitWriter aborts the connection after left bytes (0: no limit), and
// with drip writes 16 KB at a time with a pause, flushing each.
type limitWriter struct {
	http.ResponseWriter
	left int
	drip bool
	sent int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		n := len(p)
		if l.drip {
			n = min(n, 16<<10)
		}
		if l.left > 0 && l.sent+n > l.left {
			l.ResponseWriter.Write(p[:l.left-l.sent])
			l.ResponseWriter.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection is cut mid-body
		}
		if _, err := l.ResponseWriter.Write(p[:n]); err != nil {
			return 0, err
		}
		l.sent += n
		p = p[n:]
		if l.drip {
			l.ResponseWriter.(http.Flusher).Flush()
			time.Sleep(3 * time.Millisecond) // the server's pace, not a timing assertion
		}
	}
	return total, nil
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// With retries off, each run gets one connection's worth and stops with
// exit 3; running the same command again continues from the partial's
// length (overlapping one byte) until the file is whole, identical, and
// appears under its name only then.
func TestGetContinuesThePartialAcrossRuns(t *testing.T) {
	o, srv := newOrigin(t, 1<<20, 300_000, false)
	out := filepath.Join(t.TempDir(), "f.bin")
	var runs int
	for runs = 1; runs < 10; runs++ {
		code, _, errText := cli(t, "get", "-q", "--retries", "0", srv.URL+"/f", "-o", out)
		if code == exitOK {
			break
		}
		if code != exitInterrupted || !strings.Contains(errText, "f.bin.partial") {
			t.Fatalf("run %d: exit %d, %q; want 3 naming the partial", runs, code, errText)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("run %d: the output appeared before it was complete", runs)
		}
	}
	if runs != 4 {
		t.Errorf("%d runs for 1 MiB cut every 300 KB; want 4", runs)
	}
	if got := fileSum(t, out); got != sumOf(o.data) {
		t.Fatal("the file is not the server's, byte for byte")
	}
	for _, p := range []string{out + ".partial", out + ".partial.json"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind after success", p)
		}
	}
	// Each run asks again for the 16 bytes before its partial's end.
	want := []string{"", "bytes=299984-", "bytes=599968-", "bytes=899952-"}
	if got := o.requests(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("requests' ranges %q; want %q", got, want)
	}
}

// Within one run the library continues the body itself: one command, one
// request per cut.
func TestGetResumesWithinARun(t *testing.T) {
	o, srv := newOrigin(t, 1<<20, 200_000, false)
	out := filepath.Join(t.TempDir(), "f.bin")
	code, _, errText := cli(t, "get", "-q", srv.URL+"/f", "-o", out, "--sha256", sumOf(o.data))
	if code != exitOK {
		t.Fatalf("exit %d, %q", code, errText)
	}
	if got := fileSum(t, out); got != sumOf(o.data) {
		t.Fatal("not identical")
	}
	if n := len(o.requests()); n != 6 {
		t.Errorf("%d requests; want 6 (1 MiB in 200 KB pieces)", n)
	}
}

// A file that changed on the server between runs is never spliced onto
// the old partial: the If-Range fails, the server sends the new body whole,
// and the result is the new file.
func TestGetChangedFileStartsAgain(t *testing.T) {
	o, srv := newOrigin(t, 500_000, 200_000, false)
	out := filepath.Join(t.TempDir(), "f.bin")
	if code, _, errText := cli(t, "get", "-q", "--retries", "0", srv.URL+"/f", "-o", out); code != exitInterrupted {
		t.Fatalf("first run: exit %d, %q", code, errText)
	}
	changed := randomBytes(500_000, 2)
	o.set(changed, `"e2"`, 0)
	code, _, errText := cli(t, "get", "-q", srv.URL+"/f", "-o", out)
	if code != exitOK || !strings.Contains(errText, "starting again from byte 0") {
		t.Fatalf("second run: exit %d, %q; want success saying it started again", code, errText)
	}
	if got := fileSum(t, out); got != sumOf(changed) {
		t.Fatal("the result is not the new file: two versions were spliced")
	}
}

// A partial whose bytes are not a prefix of the server's body (its last
// byte differs) is refused and kept, never extended.
func TestGetRefusesAPartialThatIsNotAPrefix(t *testing.T) {
	_, srv := newOrigin(t, 500_000, 200_000, false)
	out := filepath.Join(t.TempDir(), "f.bin")
	if code, _, _ := cli(t, "get", "-q", "--retries", "0", srv.URL+"/f", "-o", out); code != exitInterrupted {
		t.Fatal("first run did not stop")
	}
	part, _ := os.ReadFile(out + ".partial")
	part[len(part)-1] ^= 0xff
	os.WriteFile(out+".partial", part, 0o644)
	code, _, errText := cli(t, "get", "-q", srv.URL+"/f", "-o", out)
	if code != exitFailed || !strings.Contains(errText, "not a prefix") {
		t.Fatalf("exit %d, %q; want 1 saying the partial is not a prefix", code, errText)
	}
	if after, _ := os.ReadFile(out + ".partial"); !bytes.Equal(after, part) {
		t.Error("the refused partial was changed")
	}
}

// --sha256 verifies: a mismatch exits 1, the file does not appear, and the
// bytes stay in the partial, said so.
func TestGetSHA256Mismatch(t *testing.T) {
	_, srv := newOrigin(t, 100_000, 0, false)
	out := filepath.Join(t.TempDir(), "f.bin")
	wrong := strings.Repeat("ab", 32)
	code, _, errText := cli(t, "get", "-q", srv.URL+"/f", "-o", out, "--sha256", wrong)
	if code != exitFailed || !strings.Contains(errText, wrong) || !strings.Contains(errText, "f.bin.partial") {
		t.Fatalf("exit %d, %q; want 1 naming both sums and where the bytes are", code, errText)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a file that failed verification appeared under its name")
	}
	if st, err := os.Stat(out + ".partial"); err != nil || st.Size() != 100_000 {
		t.Errorf("the downloaded bytes were not kept: %v", err)
	}
	if code, _, errText := cli(t, "get", "-q", srv.URL+"/f", "-o", out, "--sha256", "xyz"); code != exitUsage {
		t.Errorf("a malformed --sha256: exit %d, %q", code, errText)
	}
}

// What steady did not write is never continued: a partial without its
// record, a record of another URL, --resume with nothing to resume.
func TestGetRefusesPartialsItCannotVouchFor(t *testing.T) {
	_, srv := newOrigin(t, 1000, 0, false)
	dir := t.TempDir()
	out := filepath.Join(dir, "f.bin")
	if code, _, errText := cli(t, "get", "-q", srv.URL+"/f", "-o", out, "--resume"); code != exitUsage || !strings.Contains(errText, "no partial") {
		t.Errorf("--resume without a partial: exit %d, %q", code, errText)
	}
	os.WriteFile(out+".partial", []byte("foreign"), 0o644)
	if code, _, errText := cli(t, "get", "-q", srv.URL+"/f", "-o", out); code != exitUsage || !strings.Contains(errText, "without its record") {
		t.Errorf("partial without record: exit %d, %q", code, errText)
	}
	os.WriteFile(out+".partial.json", []byte(`{"version":1,"url":"http://elsewhere.test/x","etag":"\"a\"","length":10}`), 0o644)
	if code, _, errText := cli(t, "get", "-q", srv.URL+"/f", "-o", out); code != exitUsage || !strings.Contains(errText, "elsewhere.test") {
		t.Errorf("record of another URL: exit %d, %q", code, errText)
	}
	if b, _ := os.ReadFile(out + ".partial"); string(b) != "foreign" {
		t.Error("a partial steady refused was changed")
	}
}

// kill -9 in the middle of a download, then the same command: the file is
// the server's, byte for byte, and the second run asked only for the rest.
func TestBinaryGetKillAndRunAgain(t *testing.T) {
	bin := binary(t)
	o, srv := newOrigin(t, 4<<20, 0, true)
	out := filepath.Join(t.TempDir(), "f.bin")
	args := []string{"get", "-q", srv.URL + "/f", "-o", out}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	awaitChild(t, cmd, "no 1 MiB written", func() bool {
		st, err := os.Stat(out + ".partial")
		return err == nil && st.Size() >= 1<<20
	})
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the killed download appeared under its name")
	}
	o.mu.Lock()
	o.drip = false
	o.mu.Unlock()
	if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("second run: %v\n%s", err, b)
	}
	if got := fileSum(t, out); got != sumOf(o.data) {
		t.Fatal("the file after kill -9 and a second run is not the server's")
	}
	reqs := o.requests()
	if len(reqs) != 2 || !strings.HasPrefix(reqs[1], "bytes=") || reqs[1] == "bytes=0-" {
		t.Errorf("requests %q; want the first and one continuation from the partial", reqs)
	}
}

// A body that stops half-way and never resumes ends get within the stall
// budget's bounds, with the typed timeout named: to stdout exit 1, to a file
// exit 3 with the partial kept. (It blocked for 732 s before.)
func TestGetStalledBodyEnds(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Etag", `"s1"`)
		if rg := r.Header.Get("Range"); rg != "" {
			// A continuation is answered properly, and then stalls too.
			k := strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-")
			w.Header().Set("Content-Range", "bytes "+k+"-99999/100000")
			n, _ := strconv.Atoi(k)
			w.Header().Set("Content-Length", strconv.Itoa(100000-n))
			w.WriteHeader(http.StatusPartialContent)
		} else {
			w.Header().Set("Content-Length", "100000")
			w.Write(bytes.Repeat([]byte("s"), 5000))
		}
		w.(http.Flusher).Flush()
		select { // silence until the client hangs up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	code, _, errText := cli(t, "get", "-q", "--stall-timeout", "0.3", srv.URL+"/s")
	if code != exitFailed || !strings.Contains(errText, "read timeout") {
		t.Errorf("to stdout: exit %d, %q; want 1 naming the read timeout", code, errText)
	}
	out := filepath.Join(t.TempDir(), "s.bin")
	code, _, errText = cli(t, "get", "-q", "--stall-timeout", "0.3", srv.URL+"/s", "-o", out)
	if code != exitInterrupted || !strings.Contains(errText, "read timeout") || !strings.Contains(errText, "stalled") {
		t.Errorf("to a file: exit %d, %q; want 3, stalled, naming the read timeout", code, errText)
	}
	if st, err := os.Stat(out + ".partial"); err != nil || st.Size() != 5000 {
		t.Errorf("the 5000 bytes that arrived were not kept: %v", err)
	}
}

// rewriteRange passes an origin's answers on with their Content-Range
// rewritten by f, as a lying or unusual server would send it.
type rewriteRange struct {
	http.ResponseWriter
	f func(string) string
}

func (w rewriteRange) WriteHeader(code int) {
	if cr := w.Header().Get("Content-Range"); cr != "" {
		w.Header().Set("Content-Range", w.f(cr))
	}
	w.ResponseWriter.WriteHeader(code)
}

// A partial is continued across runs only on a Content-Range the library's
// own continuations would accept (resume.ParseContentRange): the unit in any
// case, plain digits only. A sign, a space or an unknown total is refused
// and the partial kept as it was.
func TestGetChecksTheContinuationsContentRange(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(string) string
		ok   bool
	}{
		{"unit in capitals", func(s string) string { return "BYTES" + strings.TrimPrefix(s, "bytes") }, true},
		{"a sign", func(s string) string { return strings.Replace(s, "bytes ", "bytes +", 1) }, false},
		{"a space in the total", func(s string) string { return strings.Replace(s, "/", "/ ", 1) }, false},
		{"an unknown total", func(s string) string { return s[:strings.Index(s, "/")] + "/*" }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &origin{data: randomBytes(400_000, 3), etag: `"e1"`, cut: 150_000}
			var lie atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if lie.Load() {
					w = rewriteRange{ResponseWriter: w, f: c.f}
				}
				o.ServeHTTP(w, r)
			}))
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "f.bin")
			if code, _, errText := cli(t, "get", "-q", "--retries", "0", srv.URL+"/f", "-o", out); code != exitInterrupted {
				t.Fatalf("first run: exit %d, %q", code, errText)
			}
			before, err := os.ReadFile(partialPath(out))
			if err != nil || len(before) == 0 {
				t.Fatalf("no partial after the first run: %v", err)
			}
			o.set(o.data, `"e1"`, 0)
			lie.Store(true)
			code, _, errText := cli(t, "get", "-q", "--retries", "0", srv.URL+"/f", "-o", out)
			if c.ok {
				if code != exitOK || fileSum(t, out) != sumOf(o.data) {
					t.Fatalf("exit %d, %q; want the whole file", code, errText)
				}
				return
			}
			if code == exitOK || !strings.Contains(errText, "Content-Range") {
				t.Fatalf("exit %d, %q; want a refusal naming the Content-Range", code, errText)
			}
			if after, err := os.ReadFile(partialPath(out)); err != nil || !bytes.Equal(after, before) {
				t.Errorf("the partial changed after a refused continuation (%d bytes before, %d after, %v)", len(before), len(after), err)
			}
		})
	}
}

// A body no run can continue says why and what works (issue 25): a weak
// ETag is named as the reason, not "no validator", and the advice is to
// run again or --force, never --resume; the next run names the reason
// again and ends with the size and SHA-256 of what it saved.
func TestGetUnresumableSaysWhy(t *testing.T) {
	o, srv := newOrigin(t, 4000, 1000, false)
	o.set(o.data, `W/"e1"`, 1000)
	out := filepath.Join(t.TempDir(), "f.bin")
	code, _, errText := cli(t, "get", "-q", "--retries", "0", srv.URL+"/f", "-o", out)
	if code != exitFailed || !strings.Contains(errText, `W/\"e1\"`) || !strings.Contains(errText, "weak") ||
		!strings.Contains(errText, "--force") || strings.Contains(errText, "--resume") {
		t.Fatalf("first run: exit %d, %q; want 1 naming the weak ETag and --force, not --resume", code, errText)
	}
	o.set(o.data, `W/"e1"`, 0)
	code, _, errText = cli(t, "get", srv.URL+"/f", "-o", out)
	if code != exitOK || !strings.Contains(errText, "cannot be continued: the server's ETag") || strings.Contains(errText, "no validator") {
		t.Fatalf("rerun: exit %d, %q; want 0, saying the weak ETag is why it starts over", code, errText)
	}
	sum := sha256.Sum256(o.data)
	want := "saved 4.0 kB into " + out + " in "
	if !strings.Contains(errText, want) || !strings.HasSuffix(errText, "(sha256 "+hex.EncodeToString(sum[:])+")\n") {
		t.Errorf("last line of %q: want %q… and the file's sha256", errText, want)
	}
}

// --force starts an interrupted download over instead of continuing it.
func TestGetForceStartsOver(t *testing.T) {
	o, srv := newOrigin(t, 4000, 1000, false)
	out := filepath.Join(t.TempDir(), "f.bin")
	code, _, errText := cli(t, "get", "-q", "--retries", "0", srv.URL+"/f", "-o", out)
	if code != exitInterrupted || !strings.Contains(errText, "the same command continues it") {
		t.Fatalf("first run: exit %d, %q", code, errText)
	}
	o.set(o.data, `"e1"`, 0)
	if code, _, errText := cli(t, "get", "-q", "--force", srv.URL+"/f", "-o", out); code != exitOK {
		t.Fatalf("--force: exit %d, %q", code, errText)
	}
	reqs := o.requests()
	if last := reqs[len(reqs)-1]; last != "" {
		t.Errorf("--force sent Range %q, want the whole body asked for again", last)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, o.data) {
		t.Errorf("the file is %d bytes, not the body", len(got))
	}
}

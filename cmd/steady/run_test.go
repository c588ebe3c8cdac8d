package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/steadytest"
)

// steady runs the program in-process and returns its exit code and output.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	if len(args) > 0 && args[0] == "harvest" && code != exitUsage {
		checkPair(t, outputArg(args))
	}
	checkUserWords(t, args, code, errb.String())
	checkUnlocked(t, args)
	checkStateKeyFree(t, args)
	return code, out.String(), errb.String()
}

// checkStateKeyFree is the invariant that a harvest's saved state holds no
// secret, checked after every harvest a test runs: neither STEADY_API_KEY
// nor a value given with -H is in the state file beside the output, in any
// encoding the key watch knows (ADRs 0354, 0363), whatever the key was sent
// in (a header, the query, the path of a next link).
func checkStateKeyFree(t *testing.T, args []string) {
	t.Helper()
	out := outputArg(args)
	if len(args) == 0 || args[0] != "harvest" || out == "" || out == "-" {
		return
	}
	state, err := os.ReadFile(statePath(out))
	if err != nil {
		return // no state: nothing saved to leak
	}
	var secrets []string
	if k := os.Getenv("STEADY_API_KEY"); k != "" {
		secrets = append(secrets, k)
	}
	for i, a := range args {
		if (a == "-H" || a == "--header") && i+1 < len(args) {
			if _, v, ok := strings.Cut(args[i+1], ":"); ok && len(strings.TrimSpace(v)) >= 3 {
				secrets = append(secrets, strings.TrimSpace(v))
			}
		}
	}
	text := strings.ToLower(string(state))
	for _, secret := range secrets {
		forms := wiretest.Forms(secret)
		forms["as given"] = secret
		for name, form := range forms {
			if strings.Contains(text, strings.ToLower(form)) {
				t.Errorf("harvest %s: the state file %s holds a secret (%s): %s", out, statePath(out), name, state)
			}
		}
	}
}

// checkUnlocked is the invariant of one writer per output (ADR 305),
// checked after every get and harvest a test runs: however the run ended,
// no lock is left beside its output.
func checkUnlocked(t *testing.T, args []string) {
	t.Helper()
	out := outputArg(args)
	if len(args) == 0 || (args[0] != "get" && args[0] != "harvest") || out == "" || out == "-" {
		return
	}
	if _, err := os.Lstat(lockPath(out)); err == nil {
		t.Errorf("%s %s: the lock %s was left behind", args[0], out, lockPath(out))
	}
}

func outputArg(args []string) string {
	for i, a := range args {
		if (a == "-o" || a == "--output") && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// checkPair is the invariant behind "without duplicating or losing a row",
// checked after every harvest a test runs: whatever state a harvest leaves
// beside its output, the partial file holds at least the state's offset,
// and exactly the state's rows (and header) before it. So a resume, which
// cuts the file there and fetches the state's next page, neither loses
// nor repeats a row.
func checkPair(t *testing.T, out string) {
	t.Helper()
	if out == "" || out == "-" {
		return
	}
	st, err := loadState(statePath(out))
	if err != nil {
		t.Errorf("invariant: the state beside %s cannot be read: %v", out, err)
		return
	}
	if st == nil {
		return
	}
	b, err := os.ReadFile(partialPath(out))
	if err != nil {
		t.Errorf("invariant: a state without its partial file: %v", err)
		return
	}
	if int64(len(b)) < st.Offset {
		t.Errorf("invariant: %s holds %d bytes, its state counts %d", partialPath(out), len(b), st.Offset)
		return
	}
	whole := b[:st.Offset]
	var rows int64
	if st.Format == fmtGzip || st.Format == fmtZstd {
		if whole, err = decompressed(st.Format, whole); err != nil {
			t.Errorf("invariant: the whole pages of %s do not decompress: %v", partialPath(out), err)
			return
		}
	}
	switch st.Format {
	case fmtCSV, fmtCSVFlat:
		r := csv.NewReader(bytes.NewReader(whole))
		r.FieldsPerRecord = -1 // a row that needed _extra is one cell wider until the file is published
		recs, err := r.ReadAll()
		if err != nil {
			t.Errorf("invariant: the whole pages of %s are not CSV: %v", partialPath(out), err)
			return
		}
		rows = int64(len(recs))
		if st.Columns != nil && rows > 0 {
			rows-- // the header
		}
	default:
		rows = int64(bytes.Count(whole, []byte("\n")))
	}
	if len(whole) > 0 && whole[len(whole)-1] != '\n' {
		t.Errorf("invariant: the first %d bytes of %s, which its state counts as whole pages, end mid-row", st.Offset, partialPath(out))
	} else if rows != st.Rows {
		t.Errorf("invariant: the first %d bytes of %s hold %d rows, its state counts %d", st.Offset, partialPath(out), rows, st.Rows)
	}
}

func TestHelpAndUsageErrors(t *testing.T) {
	code, out, _ := cli(t, "--help")
	if code != exitOK || !strings.Contains(out, "Exit codes") || !strings.Contains(out, "harvest") {
		t.Fatalf("--help: %d %q", code, out)
	}
	for _, sub := range []string{"get", "harvest", "demo", "serve", "simulate"} {
		code, out, _ := cli(t, sub, "--help")
		if code != exitOK || !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help: exit %d, no examples in %q", sub, code, out)
		}
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"get", "--bogus", "https://x.example/"}, "unknown flag"},
		{"unknown command", []string{"fetch"}, `unknown command "fetch"`},
		{"invalid URL", []string{"get", "not a url"}, "invalid URL"},
		{"ftp URL", []string{"harvest", "ftp://x.example/items"}, "invalid URL"},
		{"no URL", []string{"get"}, "want exactly one URL"},
		{"bad pages", []string{"harvest", "https://x.example/", "--pages", "cursor:only"}, "cursor:FIELD:PARAM"},
		{"bad format", []string{"harvest", "https://x.example/", "-o", "x.xlsx"}, "--format"},
		{"resume without output", []string{"harvest", "https://x.example/", "--resume"}, "--resume needs"},
		{"negative retries", []string{"get", "--retries", "-1", "https://x.example/"}, "--retries"},
		{"bad header", []string{"get", "-H", "NoColon", "https://x.example/"}, "invalid header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errText := cli(t, c.args...)
			if code != exitUsage || !strings.Contains(errText, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 naming %q", code, errText, c.want)
			}
			if n := strings.Count(strings.TrimSpace(errText), "\n"); n > 1 {
				t.Errorf("error is %d lines, want one (plus a usage hint): %q", n+1, errText)
			}
		})
	}
}

func TestBadSettingFromEnvironment(t *testing.T) {
	t.Setenv("STEADY_RETRIES", "ten")
	code, _, errText := cli(t, "get", "https://x.example/")
	if code != exitUsage || !strings.Contains(errText, "STEADY_RETRIES") {
		t.Fatalf("exit %d, %q; want 2 naming the variable", code, errText)
	}
}

func TestKeyNeverSentInClearText(t *testing.T) {
	t.Setenv("STEADY_API_KEY", "s3cret-value")
	code, _, errText := cli(t, "get", "http://api.example.gov/x")
	if code != exitUsage || !strings.Contains(errText, "plain http") || strings.Contains(errText, "s3cret-value") {
		t.Fatalf("exit %d, %q", code, errText)
	}
}

func TestGet(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 10, KeyValue: "k3y", KeyHeader: "X-Api-Key", RequireKey: true})
	defer srv.Close()
	t.Setenv("STEADY_API_KEY", "k3y")
	code, out, errText := cli(t, "get", "-q", srv.URL+"/items?limit=2")
	if code != exitOK || !strings.Contains(out, `"id":1`) {
		t.Fatalf("get: exit %d, out %q, err %q", code, out, errText)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "page.json")
	if code, _, errText := cli(t, "get", "-q", srv.URL+"/items?limit=2", "-o", file); code != exitOK {
		t.Fatalf("get -o: %d %q", code, errText)
	}
	if b, _ := os.ReadFile(file); !bytes.Contains(b, []byte(`"id":2`)) {
		t.Fatalf("file holds %q", b)
	}
	if code, _, errText := cli(t, "get", "-q", srv.URL+"/items", "-o", file); code != exitUsage || !strings.Contains(errText, "exists") {
		t.Fatalf("existing output: %d %q", code, errText)
	}
	if code, _, errText := cli(t, "get", "-q", srv.URL+"/items", "-o", filepath.Join(dir, "no", "such", "dir", "x.json")); code != exitUsage || !strings.Contains(errText, "cannot write") {
		t.Fatalf("unwritable output: %d %q", code, errText)
	}
	if code, _, errText := cli(t, "get", "-q", "--retries", "1", srv.URL+"/items?limit=oops"); code != exitFailed || !strings.Contains(errText, "400") {
		t.Fatalf("400: %d %q", code, errText)
	}
	for _, r := range srv.Requests() {
		if !r.KeyPresent {
			t.Errorf("request %s arrived without the key", r.URL)
		}
	}
}

func TestGetRateLimitedPastCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7200")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	code, _, errText := cli(t, "get", "-q", srv.URL)
	if code != exitRateLimited || !strings.Contains(errText, "429") || !strings.Contains(errText, "2h0m0s") {
		t.Fatalf("exit %d, %q; want 4 with the wait", code, errText)
	}
}

// rowsOf reads a JSONL file's ids.
func rowsOf(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var row struct{ ID int }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		ids = append(ids, row.ID)
	}
	return ids
}

func checkExact(t *testing.T, ids []int, n int) {
	t.Helper()
	if len(ids) != n {
		t.Fatalf("%d rows, want %d", len(ids), n)
	}
	for i, id := range ids {
		if id != i+1 {
			t.Fatalf("row %d has id %d", i, id)
		}
	}
}

func TestHarvestEachStyle(t *testing.T) {
	styles := []struct {
		style steadytest.Style
		args  []string
	}{
		{steadytest.LinkHeader, nil},
		{steadytest.JSONLinks, []string{"--pages", "json-links"}},
		{steadytest.Cursor, []string{"--pages", "cursor:next_cursor:cursor"}},
	}
	for _, s := range styles {
		t.Run(s.style.String(), func(t *testing.T) {
			srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1234, Style: s.style, Faults: steadytest.Mild(3)})
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			args := append([]string{"harvest", "-q", srv.URL + "/items?limit=100", "-o", out}, s.args...)
			if code, _, errText := cli(t, args...); code != exitOK {
				t.Fatalf("exit %d: %s", code, errText)
			}
			checkExact(t, rowsOf(t, out), 1234)
			if _, err := os.Stat(partialPath(out)); !os.IsNotExist(err) {
				t.Errorf("partial file left behind")
			}
			if _, err := os.Stat(statePath(out)); !os.IsNotExist(err) {
				t.Errorf("state file left behind")
			}
		})
	}
}

func TestHarvestCSVAndMaxRows(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 500})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.csv")
	if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=40", "-o", out, "--max-rows", "101"); code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 102 || lines[0] != "id,name,value,timestamp" || !strings.HasPrefix(lines[101], "101,") {
		t.Fatalf("CSV: %d lines, header %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}

func TestHarvestHTMLInsteadOfJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>maintenance</body></html>")
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out)
	if code != exitFailed || !strings.Contains(errText, "JSON") || strings.Count(strings.TrimSpace(errText), "\n") != 0 {
		t.Fatalf("exit %d, %q; want 1 and one line about JSON", code, errText)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("an output that looks complete exists")
	}
}

// blocking wraps the flaky server: while blocked, every page from offset on
// answers 503, as a service that fails for good after page k.
type blocking struct {
	h       http.Handler
	from    int
	blocked atomic.Bool
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if off, _ := strconv.Atoi(r.URL.Query().Get("offset")); b.blocked.Load() && off >= b.from {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	b.h.ServeHTTP(w, r)
}

// blockingServer serves rows rows through a blocking from offset from,
// unblocked; the test's end stops both.
func blockingServer(t *testing.T, rows, from int) (*blocking, *httptest.Server) {
	t.Helper()
	h, err := steadytest.NewHandler(steadytest.ServerOptions{Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	b := &blocking{h: h, from: from}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return b, srv
}

func TestHarvestResumeEqualsUninterrupted(t *testing.T) {
	for _, format := range []string{"jsonl", "csv"} {
		t.Run(format, func(t *testing.T) {
			b, srv := blockingServer(t, 1000, 600)
			dir := t.TempDir()
			whole := filepath.Join(dir, "whole."+format)
			if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=100", "-o", whole); code != exitOK {
				t.Fatalf("uninterrupted: %d %s", code, errText)
			}
			b.blocked.Store(true)
			out := filepath.Join(dir, "rows."+format)
			code, _, errText := cli(t, "harvest", "-q", "--retries", "1", srv.URL+"/items?limit=100", "-o", out)
			if code != exitInterrupted || !strings.Contains(errText, "--resume") {
				t.Fatalf("interrupted: exit %d, %q; want 3 and a hint", code, errText)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatal("the interrupted output appeared under its name")
			}
			// A rerun continues the saved harvest as --resume does (ADR
			// 0337): against the server still failing, it is interrupted
			// again at the same page, and the state still says where.
			if code, _, errText := cli(t, "harvest", "-q", "--retries", "1", srv.URL+"/items?limit=100", "-o", out); code != exitInterrupted || !strings.Contains(errText, "--resume") {
				t.Fatalf("a second run without --resume: %d %q", code, errText)
			}
			b.blocked.Store(false)
			if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out, "--resume"); code != exitOK {
				t.Fatalf("resume: %d %s", code, errText)
			}
			got, _ := os.ReadFile(out)
			want, _ := os.ReadFile(whole)
			if !bytes.Equal(got, want) {
				t.Fatalf("resumed output (%d bytes) differs from the uninterrupted one (%d bytes)", len(got), len(want))
			}
		})
	}
}

// The end-to-end tests run the built binary.
var (
	binDir  string
	binOnce sync.Once
	binPath string
	binErr  error
)

func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "steady-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "steady")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// dripServer serves rows rows, every page dripping 2 KiB each 20ms, so a
// walk through them is still running when a test stops the process.
func dripServer(rows int) *steadytest.Server {
	return steadytest.NewServer(steadytest.ServerOptions{Rows: rows, Faults: steadytest.Faults{
		Rule: func(steadytest.Call) steadytest.Fault {
			return steadytest.Fault{Kind: steadytest.Drip, Chunk: 2048, Every: 20 * time.Millisecond}
		}}})
}

// awaitChild polls until ready reports what the started cmd has written;
// if it has not within 30s, it kills cmd and fails the test with what was
// awaited.
func awaitChild(t *testing.T, cmd *exec.Cmd, what string, ready func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ready() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal(what + " within 30s")
		}
		time.Sleep(5 * time.Millisecond) // polling a file another process writes; not a timing assertion
	}
}

func TestBinaryDemoSmall(t *testing.T) {
	bin := binary(t)
	out := filepath.Join(t.TempDir(), "demo.jsonl")
	cmd := exec.Command(bin, "demo", "--rows", "5000", "--seed", "2", "-o", out, "-q")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, b)
	}
	text := string(b)
	for _, want := range []string{"ids 1..5000 exactly once", "pages:    5", "attempts:", "retries by cause:", "waited:", "elapsed:"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	checkExact(t, rowsOf(t, out), 5000)
}

// Killing the process mid-walk loses nothing: --resume gives exactly the
// file an uninterrupted run gives.
func TestBinaryKillAndResume(t *testing.T) {
	bin := binary(t)
	// Every page drips slowly, so the walk is still running when it is killed.
	srv := dripServer(3000)
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "rows.jsonl")
	cmd := exec.Command(bin, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until some pages are recorded, then kill without warning.
	awaitChild(t, cmd, "no progress recorded", func() bool {
		st, err := loadState(statePath(out))
		return err == nil && st != nil && st.Done >= 3
	})
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("the killed harvest's output appeared under its name")
	}
	resume := exec.Command(bin, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out, "--resume")
	if b, err := resume.CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	checkExact(t, rowsOf(t, out), 3000)
}

func TestBinaryExitCodes(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "get", "--bogus")
	b, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(string(b), "unknown flag") {
		t.Fatalf("exit %d: %s", cmd.ProcessState.ExitCode(), b)
	}
}

func TestShellCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, errText := cli(t, "completion", shell)
		if code != exitOK || !strings.Contains(out, "steady") {
			t.Errorf("completion %s: exit %d, %d bytes, %q", shell, code, len(out), errText)
		}
	}
}

func TestSimulateSmall(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "outage.svg")
	code, out, errText := cli(t, "simulate", "--scenario", "contention", "--trials", "2")
	if code != exitOK || !strings.Contains(out, "full jitter") || !strings.Contains(out, "190") {
		t.Fatalf("contention: exit %d, %q, %q", code, out, errText)
	}
	code, out, errText = cli(t, "simulate", "--scenario", "outage", "--clients", "20", "--plot", svg)
	if code != exitOK || !strings.Contains(out, "budget") {
		t.Fatalf("outage: exit %d, %q, %q", code, out, errText)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Fatalf("chart: %v, %d bytes", err, len(b))
	}
	code, _, errText = cli(t, "simulate", "--scenario", "contention", "--plot", svg)
	if code != exitUsage || !strings.Contains(errText, "--plot") {
		t.Fatalf("plot without outage: %d %q", code, errText)
	}
}

// A next link the walk refuses after page 2: the rows of pages 1 and 2 are
// kept, and no state remains that could fetch page 2 again.
func TestHarvestRefusedLinkKeepsRowsWithoutResume(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("page") {
		case "":
			w.Header().Set("Link", `<`+srv.URL+`/?page=2>; rel="next"`)
			fmt.Fprint(w, `[{"id":1},{"id":2}]`)
		case "2":
			w.Header().Set("Link", `<https://elsewhere.example/?page=3>; rel="next"`)
			fmt.Fprint(w, `[{"id":3}]`)
		}
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out)
	if code != exitFailed || !strings.Contains(errText, "elsewhere.example") {
		t.Fatalf("exit %d, %q", code, errText)
	}
	b, _ := os.ReadFile(partialPath(out))
	if got := strings.Count(string(b), "\n"); got != 3 {
		t.Fatalf("partial file has %d rows, want 3", got)
	}
	if _, err := os.Stat(statePath(out)); !os.IsNotExist(err) {
		t.Fatalf("a state file remains: a resume would fetch page 2 again")
	}
}

// syncBuffer is a bytes.Buffer safe to read while the command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServeUntilInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--rows", "300", "--faults", "mild"}, strings.NewReader(""), io.Discard, &stderr)
	}()
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; {
		if i := strings.Index(stderr.String(), "http://"); i >= 0 {
			base = strings.Fields(stderr.String()[i:])[0]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d before serving: %q", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve printed no address: %q", stderr.String())
		}
		time.Sleep(5 * time.Millisecond) // waiting for the server goroutine to print; not a timing assertion
	}
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	if code, _, errText := cli(t, "harvest", "-q", base+"?limit=100", "-o", out); code != exitOK {
		cancel()
		t.Fatalf("harvest from serve: %d %s", code, errText)
	}
	checkExact(t, rowsOf(t, out), 300)
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	}
}

func TestServeRequireKey(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--faults", "none", "--require-key", "s3cret"}, strings.NewReader(""), io.Discard, &stderr)
	}()
	var base string
	for base == "" {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %q", code, stderr.String())
		default:
		}
		if i := strings.Index(stderr.String(), "http://"); i >= 0 {
			base = strings.Fields(stderr.String()[i:])[0]
		}
		time.Sleep(5 * time.Millisecond) // waiting for the server goroutine to print; not a timing assertion
	}
	if code, _, errText := cli(t, "get", "-q", "--retries", "0", base); code != exitFailed || !strings.Contains(errText, "401") {
		t.Errorf("without the key: %d %q", code, errText)
	}
	t.Setenv("STEADY_API_KEY", "s3cret")
	if code, out, errText := cli(t, "get", "-q", base+"?limit=1"); code != exitOK || !strings.Contains(out, `"id":1`) {
		t.Errorf("with the key: %d %q %q", code, out, errText)
	}
	cancel()
	<-done
}

func TestHarvestToStdoutWithProgress(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 250})
	defer srv.Close()
	code, out, errText := cli(t, "harvest", srv.URL+"/items?limit=100")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	if n := strings.Count(out, "\n"); n != 250 || !strings.HasPrefix(out, `{"id":1,`) {
		t.Fatalf("stdout has %d lines, starting %.20q", n, out)
	}
	if !strings.Contains(errText, "progress: 3 pages, 250/250 rows") {
		t.Errorf("stderr lacks the final progress line: %q", errText)
	}
}

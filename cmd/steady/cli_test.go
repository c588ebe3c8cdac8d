package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// runBinary runs the built program with env added to a clean copy of the
// environment (no STEADY_* variable leaks in from the test's own), and
// returns its exit code and output.
func runBinary(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STEADY_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running %v: %v", args, err)
	}
	code = cmd.ProcessState.ExitCode()
	checkUserWords(t, args, code, errb.String())
	return code, out.String(), errb.String()
}

// checkUserWords is the invariant every run of the binary in these tests
// meets: the exit code is a documented one, and stderr speaks in what the
// user typed or can type, never in the library's field names or a parser's
// internals.
func checkUserWords(t *testing.T, args []string, code int, stderr string) {
	t.Helper()
	if code < exitOK || code > exitParked {
		t.Errorf("%v: exit %d is not a documented exit code", args, code)
	}
	for _, leak := range []string{"Options.", "strconv.", "invalid argument", "Policy.", "%20"} {
		if strings.Contains(stderr, leak) {
			t.Errorf("%v: stderr speaks in library words (%q): %q", args, leak, stderr)
		}
	}
}

// counting answers every request with status, counting them.
func counting(status int, header http.Header) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
	}))
	return srv, &n
}

// Item 1: --version and the version command print the same build facts,
// and those are the ones the Go tool reads from the binary.
func TestBinaryVersion(t *testing.T) {
	code, flagOut, errText := runBinary(t, nil, "--version")
	if code != exitOK || errText != "" {
		t.Fatalf("--version: exit %d, stderr %q", code, errText)
	}
	code, cmdOut, _ := runBinary(t, nil, "version")
	if code != exitOK || cmdOut != flagOut {
		t.Fatalf("version: exit %d, %q; --version said %q", code, cmdOut, flagOut)
	}
	if !strings.HasPrefix(flagOut, "steady ") || !strings.Contains(flagOut, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("version text lacks the name or the Go release: %q", flagOut)
	}
	meta, err := exec.Command("go", "version", "-m", binary(t)).Output()
	if err != nil {
		t.Fatal(err)
	}
	var modVersion, revision string
	for _, line := range strings.Split(string(meta), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			modVersion = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			revision = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	if first := strings.SplitN(flagOut, "\n", 2)[0]; first != "steady "+modVersion {
		t.Errorf("first line %q, want the module version %q", first, modVersion)
	}
	if revision != "" && !strings.Contains(flagOut, "commit "+revision) {
		t.Errorf("the binary was built at %s, but says %q", revision, flagOut)
	}
	if revision == "" && !strings.Contains(flagOut, "commit unknown") {
		t.Errorf("no commit stamped, but the text claims one: %q", flagOut)
	}
	// No setting of a command that does work can break it.
	for _, args := range [][]string{{"--version"}, {"version"}} {
		if code, out, errText := runBinary(t, []string{"STEADY_MAX_TIME=soon", "STEADY_RETRIES=ten"}, args...); code != exitOK || out != flagOut {
			t.Errorf("%v with bad variables: exit %d, %q", args, code, errText)
		}
	}
	if code, _, errText := runBinary(t, nil, "version", "extra"); code != exitUsage || !strings.Contains(errText, "extra") {
		t.Errorf("version extra: exit %d, %q", code, errText)
	}
}

func TestBuildInfoText(t *testing.T) {
	b := buildInfo{version: "v1.2.0", commit: "abc123", when: "2026-12-01T08:00:00Z", modified: true, goVersion: "go1.26.8"}
	want := "steady v1.2.0\ncommit abc123 (2026-12-01T08:00:00Z, modified)\ngo1.26.8 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if got := b.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	b.modified, b.when = false, ""
	if got := b.String(); !strings.Contains(got, "commit abc123\n") {
		t.Errorf("clean build: %q", got)
	}
}

// Item 8: a flag overrides its variable even when the variable is malformed;
// without the flag the variable's error stands.
func TestBinaryFlagBeatsMalformedVariable(t *testing.T) {
	srv, n := counting(http.StatusServiceUnavailable, nil)
	defer srv.Close()
	env := []string{"STEADY_RETRIES=ten", "STEADY_STALL_TIMEOUT=soon"}
	code, _, errText := runBinary(t, env, "get", "-q", "--retries", "2", "--stall-timeout", "30", srv.URL)
	if code != exitFailed || !strings.Contains(errText, "503") || !strings.Contains(errText, "3 attempts") {
		t.Fatalf("exit %d, %q; want 1 after 3 attempts", code, errText)
	}
	if got := n.Load(); got != 3 {
		t.Errorf("the server saw %d requests, want 3 (--retries 2)", got)
	}
	code, _, errText = runBinary(t, env, "get", "-q", "--retries", "2", srv.URL)
	if code != exitUsage || !strings.Contains(errText, `STEADY_STALL_TIMEOUT="soon"`) || strings.Contains(errText, "STEADY_RETRIES") {
		t.Errorf("exit %d, %q; want 2 naming only the variable no flag overrides", code, errText)
	}
}

// Item 5 (flags): a bad flag value is named as typed, with what is wanted.
func TestBinaryFlagValueErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"get", "--retries", "ten", "http://x.example/"}, "--retries ten: want a whole number of re-sends"},
		{[]string{"get", "--read-timeout", "1m", "http://x.example/"}, "--read-timeout 1m: want a finite number of seconds"},
		{[]string{"get", "--connect-timeout", "0", "http://x.example/"}, "--connect-timeout 0: want a finite number of seconds, more than 0"},
		{[]string{"harvest", "--max-rows", "many", "http://x.example/"}, "--max-rows many: want a whole number"},
		{[]string{"demo", "--seed", "-1"}, "--seed -1: want a whole number, 0 or more"},
		{[]string{"get", "--max-time", "", "http://x.example/"}, `--max-time "": want`},
	}
	for _, c := range cases {
		code, _, errText := runBinary(t, nil, c.args...)
		if code != exitUsage || !strings.Contains(errText, c.want) || strings.Contains(errText, "strconv") || strings.Contains(errText, "invalid argument") {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errText, c.want)
		}
	}
}

// Item 10: completion refuses an unknown shell, and completes flag values.
func TestBinaryCompletion(t *testing.T) {
	for _, args := range [][]string{{"completion", "tcsh"}, {"completion"}} {
		code, out, errText := runBinary(t, nil, args...)
		if code != exitUsage || out != "" || !strings.Contains(errText, "bash") {
			t.Errorf("%v: exit %d, stdout %d bytes, %q; want 2 naming the shells", args, code, len(out), errText)
		}
	}
	if code, out, _ := runBinary(t, nil, "completion", "bash"); code != exitOK || !strings.Contains(out, "steady") {
		t.Errorf("completion bash: exit %d", code)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"harvest", "--pages", ""}, []string{"link", "json-links", "cursor:"}},
		{[]string{"harvest", "--format", ""}, []string{"jsonl", "csv"}},
		{[]string{"demo", "--faults", ""}, []string{"none", "mild", "harsh"}},
		{[]string{"serve", "--style", ""}, []string{"link", "json-links", "cursor"}},
		{[]string{"demo", "--style", ""}, []string{"link", "json-links", "cursor"}},
		{[]string{"simulate", "--scenario", ""}, []string{"all", "contention", "outage"}},
	}
	for _, c := range cases {
		code, out, _ := runBinary(t, nil, append([]string{"__complete"}, c.args...)...)
		var got []string
		for _, line := range strings.Split(out, "\n") {
			if line != "" && !strings.HasPrefix(line, ":") {
				got = append(got, strings.SplitN(line, "\t", 2)[0])
			}
		}
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%v: exit %d, completions %v lack %q", c.args, code, got, w)
			}
		}
	}
}

// hanging is a server whose every request hangs before its headers until
// the client gives up (or the test ends).
func hanging(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, &n
}

// Item 2: the read timeout bounds an attempt's wait for headers; it is set
// by flag or variable, and 0 disables it.
func TestBinaryReadTimeout(t *testing.T) {
	srv, n := hanging(t)
	for _, how := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"--read-timeout", "0.2"}},
		{[]string{"STEADY_READ_TIMEOUT=0.2"}, nil},
	} {
		n.Store(0)
		args := append([]string{"get", "-q", "--retries", "1"}, how.args...)
		code, _, errText := runBinary(t, how.env, append(args, srv.URL)...)
		if code != exitFailed || !strings.Contains(errText, "timeout") || !strings.Contains(errText, "2 attempts") {
			t.Errorf("%v %v: exit %d, %q; want 1 after two timed-out attempts", how.env, how.args, code, errText)
		}
		if got := n.Load(); got != 2 {
			t.Errorf("%v %v: the server saw %d requests, want 2", how.env, how.args, got)
		}
	}
	if code, _, errText := runBinary(t, []string{"STEADY_READ_TIMEOUT=ten"}, "get", "-q", srv.URL); code != exitUsage || !strings.Contains(errText, `STEADY_READ_TIMEOUT="ten"`) {
		t.Errorf("bad variable: exit %d, %q", code, errText)
	}
}

// Item 2: --max-time bounds the whole command, every attempt included, even
// with the read timeout disabled; a harvest it stops is resumable (exit 3).
func TestBinaryMaxTime(t *testing.T) {
	srv, _ := hanging(t)
	code, _, errText := runBinary(t, nil, "get", "-q", "--read-timeout", "0", "--max-time", "0.3", srv.URL)
	if code != exitFailed || !strings.Contains(errText, "stopped at --max-time 0.3s") {
		t.Errorf("get: exit %d, %q; want 1 naming --max-time", code, errText)
	}
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText = runBinary(t, []string{"STEADY_MAX_TIME=0.3", "STEADY_READ_TIMEOUT=0"}, "harvest", "-q", srv.URL, "-o", out)
	if code != exitInterrupted || !strings.Contains(errText, "--max-time 0.3s") || !strings.Contains(errText, "--resume") {
		t.Errorf("harvest: exit %d, %q; want 3, resumable", code, errText)
	}
}

// Item 2: --max-retry-after is the longest server-named wait slept off; a
// longer one stops at once with exit 4 and says how long the server asked.
func TestBinaryMaxRetryAfter(t *testing.T) {
	srv, n := counting(http.StatusTooManyRequests, http.Header{"Retry-After": {"5"}})
	defer srv.Close()
	for _, how := range [][]string{{"--max-retry-after", "1"}, nil} {
		n.Store(0)
		var env []string
		if how == nil {
			env = []string{"STEADY_MAX_RETRY_AFTER=1"}
		}
		code, _, errText := runBinary(t, env, append(append([]string{"get", "-q"}, how...), srv.URL)...)
		if code != exitRateLimited || !strings.Contains(errText, "429") || !strings.Contains(errText, "5s") {
			t.Errorf("%v: exit %d, %q; want 4 with the server's wait", how, code, errText)
		}
		if got := n.Load(); got != 1 {
			t.Errorf("%v: %d requests, want 1: a wait above the cap is not slept", how, got)
		}
	}
}

// Item 6: get on an error status shows the start of the server's message,
// escaped and bounded, and with -o writes nothing at all.
func TestBinaryGetErrorShowsServerMessage(t *testing.T) {
	body := "{\"error\": \"quota exceeded\",\n \"hint\": \"\x1b[2Jsee /docs\u202e\"}" + strings.Repeat(" pad", 400)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "page.json")
	code, stdout, errText := runBinary(t, nil, "get", "-q", srv.URL, "-o", out)
	if code != exitFailed || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing on stdout", code, stdout)
	}
	lines := strings.Split(strings.TrimRight(errText, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(errText, "403") || !strings.Contains(errText, `the server said: "{\"error\": \"quota exceeded\", \"hint\": \"\x1b[2Jsee /docs\u202e\"}`) {
		t.Errorf("stderr %q; want one line with the escaped message", errText)
	}
	if strings.ContainsAny(errText, "\x1b\u202e") || len(errText) > 600 || !strings.Contains(errText, "more bytes)") {
		t.Errorf("stderr is not escaped and bounded (%d bytes): %q", len(errText), errText)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("-o left %v behind after an error status", entries)
	}
	// Without -o the body of an error status does not go to stdout either.
	if code, stdout, _ := runBinary(t, nil, "get", "-q", srv.URL); code != exitFailed || stdout != "" {
		t.Errorf("without -o: exit %d, stdout %q", code, stdout)
	}
}

// Item 9: outputs get the usual mode, 0666 less the umask, as harvest's do.
func TestBinaryOutputMode(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 30})
	defer srv.Close()
	for _, umask := range []string{"022", "027", "0"} {
		dir := t.TempDir()
		runs := map[string][]string{
			"get.json":   {"get", "-q", srv.URL + "/items", "-o", filepath.Join(dir, "get.json")},
			"rows.jsonl": {"harvest", "-q", srv.URL + "/items?limit=10", "-o", filepath.Join(dir, "rows.jsonl")},
			"rows.csv":   {"harvest", "-q", srv.URL + "/items?limit=10", "-o", filepath.Join(dir, "rows.csv")},
			"outage.svg": {"simulate", "--scenario", "outage", "--clients", "5", "--plot", filepath.Join(dir, "outage.svg")},
		}
		mask, _ := strconv.ParseUint(umask, 8, 32)
		want := os.FileMode(0o666 &^ mask)
		for name, args := range runs {
			cmd := exec.Command("sh", append([]string{"-c", `umask ` + umask + ` && exec "$0" "$@"`, binary(t)}, args...)...)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("umask %s %v: %v\n%s", umask, args, err, b)
			}
			st, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != want {
				t.Errorf("umask %s: %s has mode %v, want %v", umask, name, got, want)
			}
		}
	}
}

// Item 3: -v prints one line per attempt with its outcome and the wait
// that follows; the URL is redacted; -q -v prints those lines only.
func TestBinaryVerbose(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://user:pa55word@", 1) + "/x?token=s3cr3t"
	for _, args := range [][]string{{"get", "-v"}, {"get", "-q", "-v"}, {"get", "--verbose"}} {
		n.Store(0)
		code, out, errText := runBinary(t, nil, append(args, u)...)
		if code != exitOK || out != "ok" {
			t.Fatalf("%v: exit %d, %q, %q", args, code, out, errText)
		}
		var attempts []string
		for _, line := range strings.Split(errText, "\n") {
			if strings.HasPrefix(line, "attempt ") {
				attempts = append(attempts, line)
			}
		}
		if len(attempts) != 3 ||
			!strings.Contains(attempts[0], "attempt 1/5 GET http://") || !strings.Contains(attempts[0], ": 503, retry in ") || !strings.Contains(attempts[0], "(backoff)") ||
			!strings.Contains(attempts[1], "attempt 2/5") || !strings.Contains(attempts[1], ": 429, retry in ") || !strings.Contains(attempts[1], "(server hint)") ||
			!strings.HasSuffix(attempts[2], ": 200") {
			t.Errorf("%v: attempt lines %q", args, attempts)
		}
		if strings.Contains(errText, "pa55word") || strings.Contains(errText, "s3cr3t") {
			t.Errorf("%v: a secret reached stderr: %q", args, errText)
		}
		if strings.Contains(errText, "retry 1/4") {
			t.Errorf("%v: the attempt is said twice: %q", args, errText)
		}
	}
	n.Store(2)
	if code, _, errText := runBinary(t, nil, "get", "-q", u); code != exitOK || errText != "" {
		t.Errorf("-q: exit %d, stderr %q", code, errText)
	}
}

// Item 4: --pages auto (the default) and the items found where they are,
// for each style the flaky server speaks; what was found is said once.
func TestBinaryHarvestDetects(t *testing.T) {
	binary(t) // builds it, or skips in -short mode before a server starts
	cases := []struct {
		style steadytest.Style
		args  []string
		want  string
	}{
		{steadytest.LinkHeader, nil, `detected: pages linked by the Link header (--pages link), items: the top-level array (--items "")`},
		{steadytest.JSONLinks, nil, `detected: pages linked by the body's "links" (--pages json-links), items at features (--items features)`},
		{steadytest.Cursor, []string{"--pages", "cursor:next_cursor:cursor"}, "detected: items at data (--items data)"},
		// serve --style json-links and harvest --pages json-links agree on
		// the key the items are under, found or named.
		{steadytest.JSONLinks, []string{"--pages", "json-links"}, "detected: items at features (--items features)"},
		{steadytest.JSONLinks, []string{"--pages", "json-links", "--items", "features"}, ""},
	}
	for _, c := range cases {
		srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 250, Style: c.style})
		out := filepath.Join(t.TempDir(), "rows.jsonl")
		code, _, errText := runBinary(t, nil, append([]string{"harvest", srv.URL + "/items?limit=100", "-o", out}, c.args...)...)
		srv.Close()
		if code != exitOK {
			t.Fatalf("%s %v: exit %d, %q", c.style, c.args, code, errText)
		}
		checkExact(t, rowsOf(t, out), 250)
		if got := strings.Count(errText, "detected:"); c.want != "" && (got != 1 || !strings.Contains(errText, c.want+"\n")) || c.want == "" && got != 0 {
			t.Errorf("%s %v: stderr %q; want %q once", c.style, c.args, errText, c.want)
		}
	}
	// -q says nothing; a page without items anywhere names --items.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"entries":[{"id":1}]}`)
	}))
	defer srv.Close()
	code, _, errText := runBinary(t, nil, "harvest", "-q", srv.URL)
	if code != exitFailed || !strings.Contains(errText, "features, items, data, results; use --items") || strings.Contains(errText, "Options.") {
		t.Errorf("no items: exit %d, %q", code, errText)
	}
}

// Item 4: --allow-host lets next links go to a host named, and nowhere
// else; a value that is not a host is refused.
func TestBinaryAllowHost(t *testing.T) {
	other := steadytest.NewServer(steadytest.ServerOptions{Rows: 5})
	defer other.Close()
	third := "127.0.0.2:1"
	var next atomic.Pointer[string]
	setNext := func(s string) { next.Store(&s) }
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "<"+*next.Load()+">; rel=\"next\"")
		io.WriteString(w, `[{"id":0}]`)
	}))
	defer first.Close()
	otherHost := strings.TrimPrefix(other.URL, "http://")

	setNext(other.URL + "/items?limit=2")
	if code, _, errText := runBinary(t, nil, "harvest", "-q", first.URL); code != exitFailed || !strings.Contains(errText, otherHost) {
		t.Fatalf("without --allow-host: exit %d, %q", code, errText)
	}
	code, out, errText := runBinary(t, nil, "harvest", "-q", "--allow-host", otherHost, first.URL)
	if code != exitOK || strings.Count(out, "\n") != 6 {
		t.Fatalf("with --allow-host: exit %d, %d rows, %q", code, strings.Count(out, "\n"), errText)
	}
	setNext("http://" + third + "/")
	if code, _, errText := runBinary(t, nil, "harvest", "-q", "--allow-host", otherHost, first.URL); code != exitFailed || !strings.Contains(errText, third) {
		t.Errorf("a host not allowed: exit %d, %q", code, errText)
	}
	for _, bad := range []string{"http://x.example", "x.example/path", "user@x.example", ""} {
		if code, _, errText := runBinary(t, nil, "harvest", "--allow-host", bad, first.URL); code != exitUsage || !strings.Contains(errText, "--allow-host") {
			t.Errorf("--allow-host %q: exit %d, %q", bad, code, errText)
		}
	}
}

// Item 5: messages name what the user typed, and count in words.
func TestBinaryMessagesInTheUsersWords(t *testing.T) {
	if code, _, errText := runBinary(t, nil, "get", "not a url"); code != exitUsage || !strings.Contains(errText, `invalid URL "not a url"`) {
		t.Errorf("bad URL: exit %d, %q", code, errText)
	}
	if code, _, errText := runBinary(t, nil, "get", "ftp://user:pw@x.example/?token=abc"); code != exitUsage || strings.Contains(errText, "pw") || strings.Contains(errText, "abc") {
		t.Errorf("a URL with secrets: exit %d, %q", code, errText)
	}
	if code, _, errText := runBinary(t, nil, "harvest", "--items", "a..b", "http://x.example/"); code != exitUsage || !strings.Contains(errText, `--items "a..b"`) || strings.Contains(errText, "Options") {
		t.Errorf("bad --items: exit %d, %q", code, errText)
	}

	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "one.jsonl")
	code, _, errText := runBinary(t, nil, "harvest", srv.URL+"/items", "-o", out)
	if code != exitOK || !strings.Contains(errText, "harvested 1 row in 1 page into") {
		t.Errorf("one row: exit %d, %q", code, errText)
	}

	// A refused --resume names the option that differs, as typed.
	b, bs := blockingServer(t, 300, 200)
	b.blocked.Store(true)
	out = filepath.Join(t.TempDir(), "rows.jsonl")
	if code, _, errText := runBinary(t, nil, "harvest", "-q", "--retries", "0", bs.URL+"/items?limit=100", "-o", out); code != exitInterrupted {
		t.Fatalf("interrupted: exit %d, %q", code, errText)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pages", "link"}, `--pages "auto", not --pages "link"`},
		{[]string{"--items", ""}, `no --items, not --items ""`},
		{[]string{"--max-rows", "7"}, "--max-rows 0, not --max-rows 7"},
	} {
		args := append([]string{"harvest", "-q", bs.URL + "/items?limit=100", "-o", out, "--resume"}, c.args...)
		if code, _, errText := runBinary(t, nil, args...); code != exitUsage || !strings.Contains(errText, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errText, c.want)
		}
	}
	b.blocked.Store(false)
	if code, _, errText := runBinary(t, nil, "harvest", "-q", bs.URL+"/items?limit=100", "-o", out, "--resume"); code != exitOK {
		t.Errorf("the same command line resumes: exit %d, %q", code, errText)
	}
	checkExact(t, rowsOf(t, out), 300)
}

// Item 7: progress after --resume starts from the rows and pages already
// done, says where it picks up once, and ends at 100%.
func TestBinaryResumeProgress(t *testing.T) {
	b, srv := blockingServer(t, 1000, 300)
	b.blocked.Store(true)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	args := []string{"harvest", srv.URL + "/items?limit=100", "-o", out}
	if code, _, errText := runBinary(t, nil, append(args, "-q", "--retries", "0")...); code != exitInterrupted {
		t.Fatalf("interrupted: exit %d, %q", code, errText)
	}
	b.blocked.Store(false)
	code, _, errText := runBinary(t, nil, append(args, "--resume")...)
	if code != exitOK {
		t.Fatalf("resume: exit %d, %q", code, errText)
	}
	if strings.Count(errText, "resuming at") != 1 || !strings.Contains(errText, "resuming at row 301 (page 4)\n") {
		t.Errorf("stderr %q; want one resuming line", errText)
	}
	if !strings.Contains(errText, "progress: 10 pages, 1000/1000 rows") {
		t.Errorf("stderr %q; want the final line at 1000/1000", errText)
	}
	for _, line := range strings.Split(errText, "\n") {
		if strings.HasPrefix(line, "progress: ") && (strings.Contains(line, " 100/1000") || strings.Contains(line, " 1 page,")) {
			t.Errorf("a progress line counts from zero: %q", line)
		}
	}
	checkExact(t, rowsOf(t, out), 1000)
}

// Item 8: demo honours the retry settings: its client line says what it
// runs with, and a policy too weak for the faults fails (the same seed
// gives the same faults), leaving no temporary files and no resume hint.
func TestBinaryDemoHonoursSettings(t *testing.T) {
	tmp := t.TempDir() // where the demo's default output goes
	code, out, errText := runBinary(t, []string{"TMPDIR=" + tmp}, "demo", "-q", "--rows", "3000", "--retries", "0", "--stall-timeout", "5", "--read-timeout", "0.5")
	if code != exitFailed || !strings.Contains(out, "client:   up to 1 attempt a request, stall budget 5s, read timeout 500ms") {
		t.Errorf("--retries 0: exit %d, %q, %q; want 1 with the settings said", code, out, errText)
	}
	if strings.Contains(errText, "--resume") {
		t.Errorf("the demo offers a resume its server cannot serve: %q", errText)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the failed demo left %v", left)
	}
	code, out, errText = runBinary(t, []string{"STEADY_RETRIES=20", "STEADY_MAX_RETRY_AFTER=3"}, "demo", "-q", "--rows", "3000", "--faults", "mild",
		"-o", filepath.Join(tmp, "rows.jsonl"))
	if code != exitOK || !strings.Contains(out, "up to 21 attempts a request") || !strings.Contains(out, "Retry-After slept up to 3s") || !strings.Contains(out, "ids 1..3000 exactly once") {
		t.Errorf("from the environment: exit %d, %q, %q", code, out, errText)
	}
}

// Item 8: simulate says how many trials it runs, shows its progress on
// stderr (none with -q), and refuses a negative count.
func TestBinarySimulateProgress(t *testing.T) {
	code, out, errText := runBinary(t, nil, "simulate", "--scenario", "contention", "--trials", "1")
	if code != exitOK || !strings.Contains(out, "(mean of 1 trial, seed 1)") {
		t.Fatalf("exit %d, %q", code, out)
	}
	if !strings.Contains(errText, "simulating contention: 4 levels x 5 policies, 1 trial each (seed 1)\n") || !strings.Contains(errText, "contention: 20/20 rows") {
		t.Errorf("stderr %q; want the plan and the progress", errText)
	}
	code, _, errText = runBinary(t, nil, "simulate", "--scenario", "outage", "--clients", "5")
	if code != exitOK || !strings.Contains(errText, "simulating an outage: 4 policies, 5 clients") || strings.Count(errText, "\noutage: ") != 4 || !strings.Contains(errText, "outage: 4/4 policies") {
		t.Errorf("outage: exit %d, stderr %q", code, errText)
	}
	if code, _, errText := runBinary(t, nil, "simulate", "-q", "--scenario", "contention", "--trials", "1"); code != exitOK || errText != "" {
		t.Errorf("-q: exit %d, stderr %q", code, errText)
	}
	if code, _, errText := runBinary(t, nil, "simulate", "--trials", "-3"); code != exitUsage || !strings.Contains(errText, "--trials -3: want") {
		t.Errorf("--trials -3: exit %d, %q", code, errText)
	}
	// Without --trials the count said is the one run, not 0.
	if code, out, _ := runBinary(t, nil, "simulate", "--help"); code != exitOK || !strings.Contains(out, "100 trials") {
		t.Errorf("help: %d", code)
	}
}

// With -v, the attempt lines come from the goroutine fetching ahead and the
// harvest's own lines (what it detected) from the one writing: stderr takes
// them one at a time, each line whole (run with -race).
func TestVerboseHarvestLinesAreWhole(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 300})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := cli(t, "harvest", "-v", srv.URL+"/items?limit=10", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	attempts := 0
	for line := range strings.Lines(errText) {
		switch {
		case strings.HasPrefix(line, "attempt 1/"):
			attempts++
			if !strings.HasSuffix(line, ": 200\n") {
				t.Errorf("an attempt line not whole: %q", line)
			}
		case strings.HasPrefix(line, "detected: "), strings.HasPrefix(line, "progress: "), strings.HasPrefix(line, "harvested "), line == "\n":
		default:
			t.Errorf("a line of no known kind (two lines mixed?): %q", line)
		}
	}
	if attempts < 30 || !strings.Contains(errText, "detected: ") {
		t.Errorf("%d attempt lines, and detected %v; want 30 or more and the detected line:\n%s", attempts, strings.Contains(errText, "detected: "), errText)
	}
	checkExact(t, rowsOf(t, out), 300)
}

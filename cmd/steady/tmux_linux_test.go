package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The waiting output in a real terminal (issue 25): the built program runs
// in a detached tmux session of a fixed size against a server that makes
// it wait, and the screen is read back with capture-pane at a wait, after
// Ctrl-C and at the end of a run. Each screen must hold the bars once,
// no frozen frame above them, the command's lines whole, and a countdown
// that moves. With STEADY_WRITE_SCREENS=1 the screens are written to
// docs/screens, which the README shows.

const screenW, screenH = 100, 12

// tmuxPane is the pane of a tmux session of the test's own (its own
// server socket, no configuration file), fresh for each run so that the
// program starts on a blank screen with the cursor at the top. The shell
// around the program prints its exit status and keeps the pane open.
type tmuxPane struct {
	t       *testing.T
	socket  string
	session string
	runs    int
}

// exitRE is the line the shell prints after the program.
var exitRE = regexp.MustCompile(`(?m)^\[exit (\d+)\]$`)

func startTmux(t *testing.T) *tmuxPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (apt-get install -y tmux); .ci/run installs it")
		}
		t.Skip("tmux is not installed; skipping outside CI")
	}
	p := &tmuxPane{t: t, socket: "steady-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	t.Cleanup(func() { _ = p.cmd("kill-server").Run() })
	return p
}

func (p *tmuxPane) cmd(args ...string) *exec.Cmd {
	c := exec.Command("tmux", append([]string{"-L", p.socket, "-f", "/dev/null"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STEADY_") && !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "TMUX") {
			c.Env = append(c.Env, kv)
		}
	}
	return c
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := p.cmd(args...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// run starts argv in dir, in a new session of screenW x screenH.
func (p *tmuxPane) run(dir string, argv ...string) {
	p.t.Helper()
	old := p.session
	p.runs++
	p.session = "run" + strconv.Itoa(p.runs)
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	script := strings.Join(quoted, " ") + `; echo "[exit $?]"; exec sleep 3600`
	p.tmux("new-session", "-d", "-s", p.session, "-x", strconv.Itoa(screenW), "-y", strconv.Itoa(screenH), "-c", dir, script)
	if old != "" {
		// After the new one exists: the server ends with its last session.
		p.tmux("kill-session", "-t", old)
	}
}

// screen is what the pane shows, a line wrapped at the pane's width
// joined again, without trailing blank lines.
func (p *tmuxPane) screen() string {
	p.t.Helper()
	var keep []string
	for _, l := range strings.Split(p.tmux("capture-pane", "-p", "-J", "-t", p.session), "\n") {
		keep = append(keep, strings.TrimRight(l, " "))
	}
	return strings.TrimRight(strings.Join(keep, "\n"), "\n") + "\n"
}

// ended waits for the program to end and returns its exit status and the
// screen without the shell's line.
func (p *tmuxPane) ended() (int, string) {
	p.t.Helper()
	s := p.await("the program's end", exitRE.MatchString)
	m := exitRE.FindStringSubmatch(s)
	code, _ := strconv.Atoi(m[1])
	return code, strings.TrimRight(exitRE.ReplaceAllString(s, ""), "\n") + "\n"
}

// await reads the screen until ok holds, failing after 60 s: a bound on a
// program that hangs, not a measurement.
func (p *tmuxPane) await(what string, ok func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := p.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the screen never showed %s:\n%s", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitingAPI serves pages of 10 of rows rows, linked by Link headers with
// X-Total-Count. The first request for the page at offset hold is answered
// 429 with Retry-After: after; its arrival is told on asked.
func waitingAPI(t *testing.T, rows, hold int, after time.Duration) (*httptest.Server, <-chan struct{}) {
	asked := make(chan struct{}, 1)
	var refused atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		if off == hold && refused.CompareAndSwap(false, true) {
			w.Header().Set("Retry-After", strconv.Itoa(int(after/time.Second)))
			w.WriteHeader(http.StatusTooManyRequests)
			select {
			case asked <- struct{}{}:
			default:
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Total-Count", strconv.Itoa(rows))
		if off+10 < rows {
			w.Header().Set("Link", fmt.Sprintf(`<http://%s/items?offset=%d>; rel="next"`, r.Host, off+10))
		}
		var b strings.Builder
		b.WriteString("[")
		for i := off; i < min(off+10, rows); i++ {
			if i > off {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"id":%d}`, i+1)
		}
		b.WriteString("]")
		io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv, asked
}

var countdownRE = regexp.MustCompile(`waiting (\d+(?:\.\d)?)s as the server asked`)

func countdownOf(t *testing.T, screen string) float64 {
	t.Helper()
	m := countdownRE.FindAllStringSubmatch(screen, -1)
	if len(m) != 1 {
		t.Fatalf("want one countdown on the screen, found %d:\n%s", len(m), screen)
	}
	v, err := strconv.ParseFloat(m[0][1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkScreen is what every screen must meet: the bars once, no frozen
// placeholder frame, no echoed control character, the detected line once.
func checkScreen(t *testing.T, name, screen string) {
	t.Helper()
	rowsLines, stateLines := 0, 0
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.HasPrefix(l, "rows "):
			rowsLines++
		case strings.HasPrefix(l, "retries "):
			stateLines++
		}
		if strings.HasPrefix(l, "rows 0 ") {
			t.Errorf("%s: a frame before the first page is left on the screen: %q", name, l)
		}
		if strings.Contains(l, "^C") || strings.ContainsAny(l, "\x1b\r") {
			t.Errorf("%s: an echo or an escape is left in the line %q", name, l)
		}
	}
	if rowsLines != 1 || stateLines != 1 {
		t.Errorf("%s: %d rows lines and %d status lines, want the bars once:\n%s", name, rowsLines, stateLines, screen)
	}
	if n := strings.Count(screen, "detected: "); n != 1 {
		t.Errorf("%s: the detected line shows %d times, want once:\n%s", name, n, screen)
	}
}

func writeScreen(t *testing.T, name, screen string) {
	t.Helper()
	if os.Getenv("STEADY_WRITE_SCREENS") != "1" {
		return
	}
	path := filepath.Join("..", "..", "docs", "screens", name+".txt")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(screen), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTerminalScreens(t *testing.T) {
	bin := binary(t)
	pane := startTmux(t)
	dir := t.TempDir()

	t.Run("wait and end", func(t *testing.T) {
		pane.t = t
		srv, asked := waitingAPI(t, 60, 30, 4*time.Second)
		out := "items.jsonl"
		pane.run(dir, bin, "harvest", srv.URL+"/items?offset=0", "-o", out)
		select {
		case <-asked:
		case <-time.After(60 * time.Second):
			t.Fatalf("the 429 was never asked for:\n%s", pane.screen())
		}
		first := pane.await("the wait", func(s string) bool { return countdownRE.MatchString(s) })
		checkScreen(t, "at the wait", first)
		from := countdownOf(t, first)
		later := pane.await("the countdown moving", func(s string) bool {
			return countdownRE.MatchString(s) && countdownOf(t, s) != from || strings.Contains(s, "harvested")
		})
		if strings.Contains(later, "harvested") {
			t.Fatalf("the wait of %vs ended before the screen showed it counting down:\n%s", from, later)
		}
		if to := countdownOf(t, later); to >= from {
			t.Errorf("the countdown went from %vs to %vs", from, to)
		}
		checkScreen(t, "later in the wait", later)
		writeScreen(t, "wait", first)

		code, end := pane.ended()
		if code != exitOK {
			t.Errorf("exit %d, want 0:\n%s", code, end)
		}
		checkScreen(t, "at the end", end)
		lines := strings.Split(strings.TrimSpace(end), "\n")
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "harvested 60 rows in 6 pages into "+out+" (") {
			t.Errorf("the last line is %q, want the harvest's summary", last)
		}
		if !strings.Contains(end, "rows 60/60 100%") || strings.Contains(end, "waiting") {
			t.Errorf("the final frame does not show the finished walk without a wait:\n%s", end)
		}
		writeScreen(t, "end", end)
	})

	t.Run("ctrl-c", func(t *testing.T) {
		pane.t = t
		srv, asked := waitingAPI(t, 60, 20, 50*time.Second)
		pane.run(dir, bin, "harvest", srv.URL+"/items?offset=0", "-o", "cut.jsonl")
		select {
		case <-asked:
		case <-time.After(60 * time.Second):
			t.Fatalf("the 429 was never asked for:\n%s", pane.screen())
		}
		pane.await("the wait", func(s string) bool { return countdownRE.MatchString(s) })
		pane.tmux("send-keys", "-t", pane.session, "C-c")
		code, end := pane.ended()
		if code != exitInterrupted {
			t.Errorf("exit %d, want %d:\n%s", code, exitInterrupted, end)
		}
		checkScreen(t, "after Ctrl-C", end)
		lines := strings.Split(strings.TrimSpace(end), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "steady: interrupted") {
			t.Errorf("the last line is %q, want the one line that says the run was interrupted", last)
		}
		if n := strings.Count(end, "interrupted") + strings.Count(end, "context canceled"); n != 2 {
			// The status line's "interrupted", and the last line.
			t.Errorf("the interruption is told %d times, want the status and the last line:\n%s", n, end)
		}
		if strings.Contains(end, "context canceled") {
			t.Errorf("the library's words for the cancellation reach the screen:\n%s", end)
		}
		if strings.Contains(end, "waiting") {
			t.Errorf("the final frame still shows the wait:\n%s", end)
		}
		writeScreen(t, "interrupted", end)
	})
}

package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// A rate limit past the cap exits 4 from harvest as from get, with the
// wait named, whether the output is a file (resumable) or stdout.
func TestHarvestRateLimitedPastCap(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
	}{{"429", http.StatusTooManyRequests}, {"503", http.StatusServiceUnavailable}} {
		t.Run(c.name, func(t *testing.T) {
			srv := newPageServer(t, objects(1, 2), objects(3, 4), objects(5, 6))
			srv.hdr = http.Header{"Retry-After": {"7200"}}
			srv.fail[2] = c.status
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out)
			if code != exitRateLimited || !strings.Contains(errText, "2h0m0s") || !strings.Contains(errText, "--resume") {
				t.Fatalf("exit %d, %q; want 4 naming the wait and --resume", code, errText)
			}
			st, _ := loadState(statePath(out))
			if st == nil || st.Done != 1 || !strings.HasSuffix(st.Next, "page=2") {
				t.Fatalf("state %+v; want page 2 next", st)
			}
			code, stdout, errText := cli(t, "harvest", "-q", srv.URL)
			if code != exitRateLimited || !strings.Contains(errText, "2h0m0s") || strings.Count(stdout, "\n") != 2 {
				t.Fatalf("to stdout: exit %d, %d rows, %q; want 4 after the 2 rows", code, strings.Count(stdout, "\n"), errText)
			}
			srv.mu.Lock()
			delete(srv.fail, 2)
			srv.mu.Unlock()
			if code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out, "--resume"); code != exitOK {
				t.Fatalf("resume: %d %q", code, errText)
			}
			checkExact(t, rowsOf(t, out), 6)
		})
	}
}

// hangingBody sends headers and a first part, then nothing until the
// client goes away.
func hangingBody(first string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
}

// interrupt starts bin with args, waits for its first line of stdout,
// sends SIGINT as Ctrl-C does, and returns the exit code and stderr.
func interrupt(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	if _, err := r.ReadString('\n'); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no output before the interrupt: %v, %s", err, stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	io.Copy(io.Discard, r)
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), stderr.String()
}

func TestBinaryCtrlCExitsInterrupted(t *testing.T) {
	bin := binary(t)
	t.Run("get", func(t *testing.T) {
		srv := hangingBody("{\"first\":\n")
		defer srv.Close()
		code, errText := interrupt(t, bin, "get", "-q", srv.URL)
		if code != exitInterrupted || !strings.Contains(errText, "interrupted") || strings.Contains(errText, "context canceled") {
			t.Fatalf("exit %d, %q; want 3 and a clear message", code, errText)
		}
	})
	t.Run("harvest to stdout", func(t *testing.T) {
		srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 3000, Faults: steadytest.Faults{
			Rule: func(c steadytest.Call) steadytest.Fault {
				if c.Seq == 1 {
					return steadytest.Fault{}
				}
				return steadytest.Fault{Kind: steadytest.Hang}
			}}})
		defer srv.Close()
		code, errText := interrupt(t, bin, "harvest", "-q", srv.URL+"/items?limit=100")
		if code != exitInterrupted || !strings.Contains(errText, "interrupted") || !strings.Contains(errText, "100 rows") {
			t.Fatalf("exit %d, %q; want 3 saying how many rows were written", code, errText)
		}
	})
	t.Run("harvest to a file", func(t *testing.T) {
		srv := dripServer(3000)
		defer srv.Close()
		out := filepath.Join(t.TempDir(), "rows.jsonl")
		cmd := exec.Command(bin, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		awaitChild(t, cmd, "no progress", func() bool {
			st, err := loadState(statePath(out))
			return err == nil && st != nil && st.Done >= 1
		})
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(stderr.String(), "--resume") {
			t.Fatalf("exit %d, %q", code, stderr.String())
		}
		if b, err := exec.Command(bin, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out, "--resume").CombinedOutput(); err != nil {
			t.Fatalf("resume: %v %s", err, b)
		}
		checkExact(t, rowsOf(t, out), 3000)
	})
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/steadytest"
)

// parkServer serves rows one a page behind a quota of limit requests
// every window, whose X-RateLimit-Reset names the Unix second the window
// ends: the instant a parked harvest must give as resume_at.
func parkServer(t *testing.T, rows, limit int, window time.Duration) *steadytest.Server {
	t.Helper()
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: rows, Faults: steadytest.Faults{
		Quota: steadytest.Quota{Limit: limit, Window: window, Headers: steadytest.XRateLimit, EpochReset: true}}})
	t.Cleanup(srv.Close)
	return srv
}

// windowEnds returns the Unix seconds at which the server's quota windows
// end, as its headers name them, from its request log: a window opens
// with the first request after the last one ended. It fails the test on
// a request the quota refused.
func windowEnds(t *testing.T, srv *steadytest.Server, window time.Duration) []time.Time {
	t.Helper()
	var ends []time.Time
	var end time.Time
	for _, r := range srv.Requests() {
		if r.Seq == 0 {
			continue
		}
		if r.Fault.Kind == steadytest.QuotaExceeded {
			t.Errorf("request %d (%s) was refused by the quota", r.Seq, r.URL)
		}
		if end.IsZero() || !r.Time.Before(end) {
			end = r.Time.Add(window)
			ends = append(ends, ceilSecond(end))
		}
	}
	return ends
}

func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); r.Before(t) {
		return r.Add(time.Second)
	}
	return t
}

var resumeAtRE = regexp.MustCompile(`resume_at (\S+?)\)`)

// A harvest under --park exit stops at the spent quota with exit 5, no
// request refused, and names as resume_at the second the quota's window
// ends, on stderr, in --json-status and in its state.
func TestParkExitNamesTheReset(t *testing.T) {
	t.Parallel()
	const rows, limit, window = 7, 4, 3 * time.Second
	srv := parkServer(t, rows, limit, window)
	dir := t.TempDir()
	out, status := filepath.Join(dir, "rows.jsonl"), filepath.Join(dir, "status.json")
	code, _, errText := runBinary(t, nil, "harvest", "-q", srv.URL+"/items?limit=1", "-o", out,
		"--max-retry-after", "0.5", "--park", "exit", "--json-status", status)
	if code != exitParked {
		t.Fatalf("exit %d, want %d: %s", code, exitParked, errText)
	}
	ends := windowEnds(t, srv, window)
	if len(ends) != 1 {
		t.Fatalf("the harvest spanned %d quota windows, want 1", len(ends))
	}
	want := ends[0].UTC().Format(time.RFC3339)
	m := resumeAtRE.FindStringSubmatch(errText)
	if m == nil || m[1] != want {
		t.Fatalf("stderr %q; want resume_at %s", errText, want)
	}
	var st jsonStatus
	b, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("--json-status holds %q: %v", b, err)
	}
	if st.Status != "parked" || st.ExitCode != exitParked || st.ResumeAt != want || st.Rows != limit || st.Pages != limit {
		t.Errorf("--json-status %+v; want parked, exit 5, resume_at %s, %d rows and pages", st, want, limit)
	}
	saved, err := loadState(statePath(out))
	if err != nil || saved == nil || saved.ResumeAt != want || saved.Rows != limit {
		t.Errorf("state %+v, %v; want resume_at %s after %d rows", saved, err, want, limit)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".status.json.tmp-*")); len(leftovers) != 0 {
		t.Errorf("temporary files left beside the status: %v", leftovers)
	}

	// The next run, started before resume_at, waits for it rather than
	// draw a refusal, and finishes with every row once.
	start := time.Now()
	code, _, errText = runBinary(t, nil, "harvest", "-q", srv.URL+"/items?limit=1", "-o", out,
		"--max-retry-after", "0.5", "--park", "wait", "--resume", "--json-status", status)
	if code != exitOK {
		t.Fatalf("the resumed run: exit %d: %s", code, errText)
	}
	checkExact(t, rowsOf(t, out), rows)
	if n := len(srv.Requests()); n != rows {
		t.Errorf("%d requests; want %d, each sent once", n, rows)
	}
	for _, r := range srv.Requests()[limit:] {
		if r.Time.Before(ends[0]) {
			t.Errorf("request %d at %v, before resume_at %s", r.Seq, r.Time, want)
		}
	}
	windowEnds(t, srv, window) // no refusal
	if b, _ := os.ReadFile(status); !strings.Contains(string(b), `"status": "complete"`) {
		t.Errorf("--json-status after the resumed run: %s", b)
	}
	t.Logf("the resumed run took %v, waiting for %s", time.Since(start).Round(time.Millisecond), want)
}

// A harvest under --park wait sleeps once, until the quota's window ends,
// and finishes with every row once and no request refused.
func TestParkWaitSleepsOnceAndFinishes(t *testing.T) {
	t.Parallel()
	const rows, limit, window = 6, 4, 2 * time.Second
	srv := parkServer(t, rows, limit, window)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := runBinary(t, nil, "harvest", srv.URL+"/items?limit=1", "-o", out, "--max-retry-after", "0.5", "--park", "wait")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	checkExact(t, rowsOf(t, out), rows)
	ends := windowEnds(t, srv, window)
	if len(ends) != 2 {
		t.Fatalf("%d quota windows, want 2", len(ends))
	}
	if n := strings.Count(errText, "parked until"); n != 1 {
		t.Errorf("%d park lines, want 1: %q", n, errText)
	}
	if !strings.Contains(errText, ends[0].UTC().Format(time.RFC3339)) {
		t.Errorf("stderr does not name the reset %s: %q", ends[0].UTC().Format(time.RFC3339), errText)
	}
	if _, err := os.Stat(statePath(out)); !os.IsNotExist(err) {
		t.Errorf("the state outlived the complete harvest: %v", err)
	}
}

// --park and --reserve refuse what they cannot do, naming the flag, with
// exit 2 and no request sent.
func TestParkAndReserveFlags(t *testing.T) {
	t.Parallel()
	srv := parkServer(t, 3, 10, time.Second)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--park", "later", "-o", out}, "--park later: want wait or exit"},
		{[]string{"--park", "exit"}, "--park exit needs -o FILE"},
		{[]string{"--reserve", "lots", "-o", out}, "--reserve lots: want a share"},
		{[]string{"--reserve", "95%", "-o", out}, "--reserve 95%: want a share"},
		{[]string{"--reserve", "-5%", "-o", out}, "--reserve -5%: want a share"},
		{[]string{"--reserve", "NaN", "-o", out}, "--reserve NaN: want a share"},
	} {
		code, _, errText := runBinary(t, nil, append([]string{"harvest", "-q", srv.URL + "/items"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errText, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errText, c.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent by refused command lines", n)
	}
	if code, _, errText := runBinary(t, nil, "get", "-q", "--reserve", "abc", srv.URL+"/items"); code != exitUsage || !strings.Contains(errText, "--reserve abc") {
		t.Errorf("get --reserve abc: exit %d, %q", code, errText)
	}
}

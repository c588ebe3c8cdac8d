package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/otelsteady"
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
		{[]string{"--park", "wait", "-o", "-"}, "--park wait needs -o FILE"},
		{[]string{"--json-status", out, "-o", out}, "is the harvest's own file"},
		{[]string{"--json-status", statePath(out), "-o", out}, "is the harvest's own file"},
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

// expiringCursors serves rows one a page by an opaque cursor that expires
// a second after it was issued, behind a quota of limit a window (whose
// reset names its Unix second), as a scroll API does.
func expiringCursors(t *testing.T, rows, limit int, window time.Duration) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	issued := map[string]time.Time{}
	var start time.Time
	used := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if start.IsZero() || !now.Before(start.Add(window)) {
			start, used = now, 0
		}
		end := start.Add(window)
		w.Header().Set("X-RateLimit-Limit", strconv.Itoa(limit))
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(ceilSecond(end).Unix(), 10))
		if used >= limit {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		used++
		w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(limit-used))
		at := 0
		if c := r.URL.Query().Get("cursor"); c != "" {
			if t0, ok := issued[c]; !ok || now.Sub(t0) > time.Second {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusGone)
				io.WriteString(w, `{"error":"scroll cursor expired"}`)
				return
			}
			at, _ = strconv.Atoi(strings.TrimPrefix(c, "c"))
		}
		next := ""
		if at+1 < rows {
			next = "c" + strconv.Itoa(at+1)
			issued[next] = now
		}
		w.Header().Set("X-Total-Count", strconv.Itoa(rows))
		json.NewEncoder(w).Encode(map[string]any{"data": []map[string]int{{"id": at + 1}}, "next": next})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A cursor that expires while the harvest is parked is reported as such:
// the server's own cursor cannot be rebuilt, so the harvest ends (exit 1)
// with the rows received kept and the way on named, and no row is
// written twice.
func TestParkedCursorExpires(t *testing.T) {
	t.Parallel()
	const rows, limit, window = 6, 3, 3 * time.Second
	srv := expiringCursors(t, rows, limit, window)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := runBinary(t, nil, "harvest", "-q", srv.URL+"/items", "--pages", "cursor:next:cursor", "--items", "data",
		"-o", out, "--max-retry-after", "0.5", "--park", "wait")
	if code != exitFailed {
		t.Fatalf("exit %d, want 1: %s", code, errText)
	}
	for _, want := range []string{"expired while the harvest was parked", "410", "cannot be rebuilt", "--force"} {
		if !strings.Contains(errText, want) {
			t.Errorf("stderr lacks %q: %s", want, errText)
		}
	}
	checkExact(t, rowsOf(t, partialPath(out)), limit)
}

// A computed style's saved page that expired while the harvest was parked
// is rebuilt from the first URL at the saved row: the server refuses the
// first request after the park as an expired search context, once, and
// the harvest carries on from the same row with every row once.
func TestParkedOffsetPageIsRebuilt(t *testing.T) {
	t.Parallel()
	const rows, limit, window = 6, 3, 3 * time.Second
	var mu sync.Mutex
	var start, last time.Time
	used, expired := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if start.IsZero() || !now.Before(start.Add(window)) {
			start, used = now, 0
		}
		w.Header().Set("X-RateLimit-Limit", strconv.Itoa(limit))
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(ceilSecond(start.Add(window)).Unix(), 10))
		if used >= limit {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		used++
		w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(limit-used))
		if !last.IsZero() && now.Sub(last) >= time.Second && expired == 0 {
			expired++
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusGone)
			io.WriteString(w, `{"error":"search context expired"}`)
			return
		}
		last = now
		at, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		var data []map[string]int
		for i := at; i < min(at+1, rows); i++ {
			data = append(data, map[string]int{"id": i + 1})
		}
		w.Header().Set("X-Total-Count", strconv.Itoa(rows))
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(srv.Close)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := runBinary(t, nil, "harvest", srv.URL+"/items?offset=0&limit=1", "--pages", "offset:offset:limit", "--items", "data",
		"--concurrent", "1", "-o", out, "--max-retry-after", "0.5", "--park", "wait")
	if code != exitOK {
		t.Fatalf("exit %d, want 0: %s", code, errText)
	}
	if !strings.Contains(errText, "expired while the harvest was parked") || !strings.Contains(errText, "continuing at row") {
		t.Errorf("stderr does not say the page expired and was rebuilt: %s", errText)
	}
	mu.Lock()
	n := expired
	mu.Unlock()
	if n != 1 {
		t.Errorf("the server refused %d pages as expired, want 1", n)
	}
	checkExact(t, rowsOf(t, out), rows)
}

// --reserve leaves its share of every window unused: under 50% of a quota
// of 4, a window serves 2 requests, and 4 rows take two windows with no
// request refused.
func TestReserveLeavesItsShare(t *testing.T) {
	t.Parallel()
	const rows, limit, window = 4, 4, 2 * time.Second
	srv := parkServer(t, rows, limit, window)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := runBinary(t, nil, "harvest", "-q", srv.URL+"/items?limit=1", "-o", out, "--reserve", "50%")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	checkExact(t, rowsOf(t, out), rows)
	// Every window served at most half its limit. While the pacer learns
	// how the windows begin (ADR 0364), a window's last unreserved request
	// may wait for its end as a probe and open the next one, so the rows
	// may take more than the two windows the reserve alone needs.
	if ends := windowEnds(t, srv, window); len(ends) < 2 {
		t.Errorf("%d windows, want at least 2 of at most 2 requests each", len(ends))
	}
	perWindow := map[time.Time]int{}
	var end time.Time
	for _, r := range srv.Requests() {
		if r.Seq == 0 {
			continue
		}
		if end.IsZero() || !r.Time.Before(end) {
			end = r.Time.Add(window)
		}
		perWindow[end]++
	}
	for e, n := range perWindow {
		if n > limit/2 {
			t.Errorf("the window ending %v served %d requests, more than the half the reserve leaves", e, n)
		}
	}
}

// A parked harvest's trace carries the park: a steady.park event on the
// run's root span, with how it continues and the wait until resume_at.
func TestParkIsExported(t *testing.T) {
	t.Parallel()
	w := wiretest.For(t)
	col := newCollector(t, w)
	srv := parkServer(t, 5, 3, 3*time.Second)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, errText := runTraced(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.srv.URL},
		"harvest", "-q", srv.URL+"/items?limit=1", "-o", out, "--max-retry-after", "0.5", "--park", "exit")
	w.Text("stderr", errText)
	if code != exitParked {
		t.Fatalf("exit %d, want 5: %s", code, errText)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	parks := 0
	for _, s := range col.spans {
		for _, e := range s.Events {
			if e.Name != otelsteady.EventPark {
				continue
			}
			parks++
			if s.Name != "steady harvest" {
				t.Errorf("the park is on span %q, want the run's", s.Name)
			}
			for _, kv := range e.Attributes {
				if kv.Key == otelsteady.KeyParkMode && kv.Value.GetStringValue() != "exit" {
					t.Errorf("park mode %q, want exit", kv.Value.GetStringValue())
				}
			}
		}
	}
	if parks != 1 {
		t.Errorf("%d %s events among %d spans, want 1", parks, otelsteady.EventPark, len(col.spans))
	}
}

// A state whose resume_at is no time, or further off than any quota, is
// damaged: the resume refuses it (exit 2), sending nothing, rather than
// wait on it.
func TestResumeRefusesADamagedResumeAt(t *testing.T) {
	t.Parallel()
	srv := parkServer(t, 3, 10, time.Second)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	for _, bad := range []string{"soon", time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)} {
		st := &harvestState{Version: stateVersion, URL: srv.URL + "/items?limit=1", Pages: "auto", Items: "*", Format: "jsonl",
			Next: srv.URL + "/items?limit=1&offset=1", Done: 1, Rows: 1, ResumeAt: bad}
		if err := os.WriteFile(partialPath(out), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := st.save(statePath(out)); err != nil {
			t.Fatal(err)
		}
		code, _, errText := runBinary(t, nil, "harvest", "-q", srv.URL+"/items?limit=1", "-o", out, "--resume")
		if code != exitUsage || !strings.Contains(errText, "resume_at") {
			t.Errorf("resume_at %q: exit %d, %q; want 2, naming resume_at", bad, code, errText)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent on a damaged state", n)
	}
}

// A park whose reset falls after --max-time does not sleep into the
// deadline: the harvest exits 5 at once, still parked, and a later
// --resume finishes it.
func TestParkWaitPastMaxTimeExits(t *testing.T) {
	t.Parallel()
	const rows, limit, window = 5, 3, 4 * time.Second
	srv := parkServer(t, rows, limit, window)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := runBinary(t, nil, "harvest", "-q", srv.URL+"/items?limit=1", "-o", out,
		"--max-retry-after", "0.5", "--park", "wait", "--max-time", "2")
	if code != exitParked || !strings.Contains(errText, "resume_at") {
		t.Fatalf("exit %d, %q; want 5 with resume_at", code, errText)
	}
	if n := len(srv.Requests()); n != limit {
		t.Errorf("%d requests, want the %d the quota allowed", n, limit)
	}
	code, _, errText = runBinary(t, nil, "harvest", "-q", srv.URL+"/items?limit=1", "-o", out, "--resume")
	if code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, errText)
	}
	checkExact(t, rowsOf(t, out), rows)
	windowEnds(t, srv, window)
}

// The same park, in the process (so the race detector sees the walk, the
// sleep and the resumed walk): plain lines name the park once and the
// quota's wait by its cause, and every row arrives once.
func TestParkWaitInProcess(t *testing.T) {
	t.Parallel()
	const rows, limit, window = 5, 3, 2 * time.Second
	srv := parkServer(t, rows, limit, window)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := cli(t, "harvest", srv.URL+"/items?limit=1", "-o", out, "--max-retry-after", "0.5", "--park", "wait")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	checkExact(t, rowsOf(t, out), rows)
	if n := strings.Count(errText, "parked until"); n != 1 {
		t.Errorf("%d park lines, want 1: %q", n, errText)
	}
	if len(windowEnds(t, srv, window)) != 2 {
		t.Errorf("the harvest did not wait for the second window")
	}
	// The rows before the park are counted once, not again as resumed.
	if !strings.Contains(errText, "5/5 rows") || strings.Contains(errText, "resuming at") {
		t.Errorf("progress counts the parked rows twice: %q", errText)
	}
	if n := strings.Count(errText, "detected:"); n != 1 {
		t.Errorf("%d detected lines, want 1: %q", n, errText)
	}
}

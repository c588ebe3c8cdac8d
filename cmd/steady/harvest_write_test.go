package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/steadytest"
)

// pageServer serves the bodies in pages as ?page=1.., each linked to the
// next by a Link header. The bodies may be changed between runs.
type pageServer struct {
	*httptest.Server
	mu    sync.Mutex
	pages []string
	hdr   http.Header // extra headers on every page
	fail  map[int]int // page -> status to answer instead
	base  string      // where links point ("": the server itself)
}

func newPageServer(t *testing.T, pages ...string) *pageServer {
	t.Helper()
	s := &pageServer{pages: pages, fail: map[int]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *pageServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, _ = strconv.Atoi(p)
	}
	if n < 1 || n > len(s.pages) {
		http.NotFound(w, r)
		return
	}
	for k, v := range s.hdr {
		w.Header()[k] = v
	}
	if code := s.fail[n]; code != 0 {
		w.WriteHeader(code)
		return
	}
	if n < len(s.pages) {
		base := s.base
		if base == "" {
			base = s.URL
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s/?page=%d>; rel="next"`, base, n+1))
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, s.pages[n-1])
}

func (s *pageServer) set(n int, body string) {
	s.mu.Lock()
	s.pages[n-1] = body
	s.mu.Unlock()
}

// objects is a page of items {"id":from}..{"id":to}.
func objects(from, to int) string {
	var b strings.Builder
	b.WriteByte('[')
	for id := from; id <= to; id++ {
		if id > from {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"n%d"}`, id, id)
	}
	b.WriteByte(']')
	return b.String()
}

// csvIDs reads a CSV output: its header and the first cell of every row.
func csvIDs(t *testing.T, path string) (header []string, ids []int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		t.Fatalf("%s holds NUL bytes", path)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%s is not CSV: %v", path, err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s is empty", path)
	}
	for _, r := range recs[1:] {
		id, err := strconv.Atoi(r[0])
		if err != nil {
			t.Fatalf("row %q: a second header or garbage mid-file", r)
		}
		ids = append(ids, id)
	}
	return recs[0], ids
}

// A CSV item that is not an object fails page 3: the state must still name
// page 3, so that a resume after the cause is fixed writes its rows (it
// used to skip them: ids 1 2 3 4 7 8 9 10).
func TestHarvestFailedWriteDoesNotAdvanceState(t *testing.T) {
	srv := newPageServer(t, objects(1, 2), objects(3, 4), `[5,{"id":6}]`, objects(7, 8), objects(9, 10))
	out := filepath.Join(t.TempDir(), "rows.csv")
	code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out)
	if code != exitFailed || !strings.Contains(errText, "item 1 of page 3") || !strings.Contains(errText, "4 rows") {
		t.Fatalf("exit %d, %q; want 1 naming item 1 of page 3 and the 4 rows kept", code, errText)
	}
	st, err := loadState(statePath(out))
	if err != nil || st == nil || st.Done != 2 || st.Rows != 4 || !strings.HasSuffix(st.Next, "page=3") {
		t.Fatalf("state after the failed write: %+v, %v; want page 3 next after 2 pages", st, err)
	}
	srv.set(3, objects(5, 6))
	if code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out, "--resume"); code != exitOK {
		t.Fatalf("resume: %d %q", code, errText)
	}
	header, ids := csvIDs(t, out)
	if strings.Join(header, ",") != "id,name" {
		t.Errorf("header %q", header)
	}
	checkExact(t, ids, 10)
}

// failAfter fails every write once limit bytes have passed, as a full disk
// or a dying one does.
type failAfter struct {
	w     io.Writer
	limit int
	err   error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n, _ := f.w.Write(p[:f.limit])
		f.limit = 0
		return n, f.err
	}
	f.limit -= len(p)
	return f.w.Write(p)
}

func TestHarvestFailingWriterKeepsResumePoint(t *testing.T) {
	for _, cause := range []error{syscall.ENOSPC, syscall.EIO, syscall.EFBIG} {
		t.Run(cause.Error(), func(t *testing.T) {
			srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 500})
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			client, err := steady.New(steady.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer client.CloseIdleConnections()
			origin, _ := url.Parse(srv.URL + "/items?limit=100")
			j := &job{client: client, origin: origin, pages: "auto", next: paginate.Auto, items: paginate.FindItems,
				format: "jsonl", out: out,
				wrap: func(w io.Writer) io.Writer { return &failAfter{w: w, limit: 20000, err: cause} }}
			_, err = j.run(context.Background(), nil)
			if !errors.Is(err, cause) {
				t.Fatalf("run: %v; want %v", err, cause)
			}
			st, _ := loadState(statePath(out))
			if st == nil {
				t.Fatal("no state left")
			}
			fi, _ := os.Stat(partialPath(out))
			if fi.Size() < st.Offset {
				t.Fatalf("partial file %d bytes, state offset %d", fi.Size(), st.Offset)
			}
			if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out, "--resume"); code != exitOK {
				t.Fatalf("resume: %d %q", code, errText)
			}
			checkExact(t, rowsOf(t, out), 500)
		})
	}
}

// Under "ulimit -f" the kernel refuses the write that would pass the limit
// (EFBIG): the harvest fails, and a resume without the limit gives every
// row once (it used to lose rows 401-500).
func TestBinaryHarvestFileSizeLimit(t *testing.T) {
	bin := binary(t)
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 500})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	// 64 blocks of 512 bytes: about three of the five pages fit.
	cmd := exec.Command("sh", "-c", `ulimit -f 64 && exec "$0" "$@"`, bin, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out)
	b, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(string(b), "file too large") {
		t.Fatalf("under the limit: exit %d, %s; want 1 naming the cause", code, b)
	}
	st, err := loadState(statePath(out))
	if err != nil || st == nil || st.Done == 0 || st.Done >= 5 {
		t.Fatalf("state under the limit: %+v %v", st, err)
	}
	resume := exec.Command(bin, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out, "--resume")
	if b, err := resume.CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	checkExact(t, rowsOf(t, out), 500)
}

// A partial file shorter than the state's offset (a crash on a file system
// that lost the data, or a hand edit) is refused: extending it would put
// NUL bytes where rows were.
func TestHarvestShortPartialIsRefused(t *testing.T) {
	b, srv := blockingServer(t, 500, 300)
	b.blocked.Store(true)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	if code, _, errText := cli(t, "harvest", "-q", "--retries", "0", srv.URL+"/items?limit=100", "-o", out); code != exitInterrupted {
		t.Fatalf("first run: %d %q", code, errText)
	}
	st, _ := loadState(statePath(out))
	if st == nil || st.Offset == 0 {
		t.Fatalf("state %+v", st)
	}
	if err := os.Truncate(partialPath(out), st.Offset/2); err != nil {
		t.Fatal(err)
	}
	b.blocked.Store(false)
	code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out, "--resume")
	if code != exitUsage || !strings.Contains(errText, "shorter") || !strings.Contains(errText, "--force") {
		t.Fatalf("resume: exit %d, %q; want 2 saying the file is short", code, errText)
	}
	fi, _ := os.Stat(partialPath(out))
	if fi.Size() != st.Offset/2 {
		t.Fatalf("the short partial file was changed to %d bytes", fi.Size())
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("an output appeared")
	}
	if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out, "--force"); code != exitOK {
		t.Fatalf("start over: %d %q", code, errText)
	}
	checkExact(t, rowsOf(t, out), 500)
}

// An empty first page has no columns to offer: the header comes with the
// first rows, once, whether or not a resume falls in between.
func TestHarvestCSVEmptyFirstPage(t *testing.T) {
	srv := newPageServer(t, `[]`, objects(1, 2), objects(3, 4))
	out := filepath.Join(t.TempDir(), "rows.csv")
	if code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out); code != exitOK {
		t.Fatalf("exit %d %q", code, errText)
	}
	header, ids := csvIDs(t, out)
	if strings.Join(header, ",") != "id,name" {
		t.Fatalf("header %q", header)
	}
	checkExact(t, ids, 4)

	// Interrupted after the empty page, then resumed.
	srv.mu.Lock()
	srv.fail[2] = http.StatusServiceUnavailable
	srv.mu.Unlock()
	out = filepath.Join(t.TempDir(), "resumed.csv")
	if code, _, errText := cli(t, "harvest", "-q", "--retries", "0", srv.URL, "-o", out); code != exitInterrupted {
		t.Fatalf("interrupted: %d %q", code, errText)
	}
	srv.mu.Lock()
	delete(srv.fail, 2)
	srv.mu.Unlock()
	if code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out, "--resume"); code != exitOK {
		t.Fatalf("resume: %d %q", code, errText)
	}
	header, ids = csvIDs(t, out)
	if strings.Join(header, ",") != "id,name" {
		t.Fatalf("resumed header %q", header)
	}
	checkExact(t, ids, 4)
}

// Items without keys still make one header (only _extra), never a second.
func TestHarvestCSVKeylessFirstRows(t *testing.T) {
	srv := newPageServer(t, `[{}]`, `[{"id":1}]`)
	out := filepath.Join(t.TempDir(), "rows.csv")
	if code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out); code != exitOK {
		t.Fatalf("exit %d %q", code, errText)
	}
	b, _ := os.ReadFile(out)
	if got := string(b); got != "_extra\n\"\"\n\"{\"\"id\"\":1}\"\n" {
		t.Fatalf("CSV %q", got)
	}
}

// A state file edited to send the resume elsewhere, or to a negative
// offset, is refused as damaged.
func TestHarvestEditedStateIsRefused(t *testing.T) {
	srv := newPageServer(t, objects(1, 2), objects(3, 4))
	srv.fail[2] = http.StatusServiceUnavailable
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	if code, _, errText := cli(t, "harvest", "-q", "--retries", "0", srv.URL, "-o", out); code != exitInterrupted {
		t.Fatalf("first run: %d %q", code, errText)
	}
	good, _ := os.ReadFile(statePath(out))
	for name, edit := range map[string]func(*harvestState){
		"foreign next":    func(s *harvestState) { s.Next = "http://169.254.169.254/latest/" },
		"other port":      func(s *harvestState) { s.Next = "http://127.0.0.1:1/?page=2" },
		"not http":        func(s *harvestState) { s.Next = "file:///etc/passwd" },
		"negative offset": func(s *harvestState) { s.Offset = -1 },
	} {
		t.Run(name, func(t *testing.T) {
			var st harvestState
			json.Unmarshal(good, &st)
			edit(&st)
			b, _ := json.Marshal(st)
			os.WriteFile(statePath(out), b, 0o644)
			code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out, "--resume")
			if code != exitUsage || !strings.Contains(errText, "--force") {
				t.Fatalf("exit %d, %q; want 2", code, errText)
			}
		})
	}
}

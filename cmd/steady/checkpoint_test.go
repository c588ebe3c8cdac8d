package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/steadytest"
)

// The checkpoint writes the state every N pages or T, whichever comes
// first, and a flush records whatever is pending; each state it writes
// counts exactly the bytes it made reach the file, which are flushed
// there only when a state is due.
func TestCheckpointEveryNPagesOrT(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "rows.jsonl.partial"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	path := filepath.Join(dir, "rows.jsonl.state.json")
	st := &harvestState{Version: stateVersion, Next: "https://api.example.gov/items"}
	if err := st.save(path); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := &byteCounter{w: f}
	sink := newSink("jsonl", out, nil)
	cp := newCheckpoint(f, path, out, sink, st, t0)
	cp.pages, cp.interval = 3, 10*time.Second
	onDisk := func() *harvestState {
		t.Helper()
		s, err := loadState(path)
		if err != nil || s == nil {
			t.Fatalf("state: %v", err)
		}
		return s
	}
	page := func(n int, at time.Duration) {
		t.Helper()
		if err := sink.writePage(n, rawRows{json.RawMessage(`"` + strings.Repeat("x", 7) + `"`)}); err != nil {
			t.Fatal(err)
		}
		st.Done = n
		if err := cp.pageDone(st, t0.Add(at)); err != nil {
			t.Fatal(err)
		}
		if err := cp.wait(); err != nil { // states are written in the background
			t.Fatal(err)
		}
	}
	steps := []struct {
		at        time.Duration
		wantDone  int
		wantBytes int64
	}{
		{1 * time.Second, 0, 0},   // 1 page pending
		{2 * time.Second, 0, 0},   // 2
		{3 * time.Second, 3, 30},  // the third page: N reached
		{4 * time.Second, 3, 30},  // 1 pending
		{14 * time.Second, 5, 50}, // T passed since the last write, at 3 s
		{15 * time.Second, 5, 50},
	}
	for i, s := range steps {
		page(i+1, s.at)
		if got := onDisk(); got.Done != s.wantDone || got.Offset != s.wantBytes {
			t.Fatalf("after page %d at %v: state on disk at page %d, offset %d; want %d, %d", i+1, s.at, got.Done, got.Offset, s.wantDone, s.wantBytes)
		}
	}
	if err := cp.flush(st, t0.Add(16*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := onDisk(); got.Done != 6 || got.Offset != 60 {
		t.Fatalf("after flush: page %d, offset %d; want 6, 60", got.Done, got.Offset)
	}
	if fi, _ := f.Stat(); fi.Size() != 60 {
		t.Fatalf("the file holds %d bytes after flush, want 60", fi.Size())
	}
	before, _ := os.Stat(path)
	st.Done = 99 // nothing pending: a flush must not write this
	if err := cp.flush(st, t0.Add(17*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := onDisk(); got.Done != 6 {
		t.Fatalf("a flush with nothing pending wrote the state (page %d)", got.Done)
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a flush with nothing pending rewrote the state file")
	}
}

// crashAfter lets n writes to the file through, then panics in the next,
// as a process killed mid-harvest stops: no deferred flush runs in a real
// crash, and a panic skips the harvest's own flush too. A harvest writes
// its file when a state is due (and when 64 KiB are buffered).
type crashAfter struct {
	w io.Writer
	n int
}

type crash struct{}

func (c *crashAfter) Write(p []byte) (int, error) {
	if c.n == 0 {
		panic(crash{})
	}
	c.n--
	return c.w.Write(p)
}

// A crash costs at most the pages written since the state on disk: with
// the state every 7 pages (a write each, of about 6 KiB) and a crash in the
// fourth write, at page 28, the state counts 21 pages, the resume fetches
// every page after it and none before, and the output is exact.
func TestHarvestCrashRefetchesOnlyUnrecordedPages(t *testing.T) {
	h, err := steadytest.NewHandler(steadytest.ServerOptions{Rows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var served atomic.Int64
	var resumed atomic.Bool
	var mu sync.Mutex
	var offsets []int // the rows each page asked for in the resume starts at
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if resumed.Load() {
			off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
			mu.Lock()
			offsets = append(offsets, off)
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	target := srv.URL + "/items?limit=10"
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	client, err := steady.New(steady.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	origin, _ := url.Parse(target)
	j := &job{client: client, origin: origin, pages: "auto", next: paginate.Auto, items: paginate.FindItems, format: "jsonl", out: out,
		statePages: 7, stateInterval: time.Hour,
		wrap: func(w io.Writer) io.Writer { return &crashAfter{w: w, n: 3} }}
	func() {
		defer func() {
			if _, ok := recover().(crash); !ok {
				t.Fatal("the harvest did not reach the crash")
			}
		}()
		j.run(context.Background(), nil)
	}()
	st, err := loadState(statePath(out))
	if err != nil || st == nil || st.Done != 21 || st.Rows != 210 {
		t.Fatalf("state after the crash: %+v, %v; want 21 pages, 210 rows", st, err)
	}
	if fi, err := os.Stat(partialPath(out)); err != nil || fi.Size() < st.Offset {
		t.Fatalf("the partial file (%v) is shorter than the state's offset %d", err, st.Offset)
	}
	// The page the walk was fetching ahead may still reach the server
	// after the crash: it is counted below as if the resume asked for it.
	before := served.Load()
	if before < 28 || before > 29 {
		t.Fatalf("%d pages fetched before the crash, want 28 (or 29, one ahead of the writes)", before)
	}
	resumed.Store(true)
	if code, _, errText := cli(t, "harvest", "-q", target, "-o", out, "--resume"); code != exitOK {
		t.Fatalf("resume: %d %q", code, errText)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, off := range offsets {
		if off < 210 {
			t.Errorf("the resume fetched the page at row %d, which the state counts", off)
		}
	}
	if n := len(offsets); n < 100-21 || n > 100-21+2 {
		t.Errorf("the resume fetched %d pages, want the 79 after the state (and at most the crashed run's last two arriving late)", n)
	}
	if refetched := before - int64(st.Done); refetched > 7+1 {
		t.Errorf("%d pages fetched again, more than the 7 between states and the one fetched ahead", refetched)
	}
	checkExact(t, rowsOf(t, out), 1000)
}

// Every other way a harvest ends records all it wrote: a walk interrupted
// at page 7 leaves a state at page 6, though the checkpoint had not
// written one since the start.
func TestHarvestInterruptionRecordsEveryPageWritten(t *testing.T) {
	b, srv := blockingServer(t, 1000, 600)
	b.blocked.Store(true)
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	if code, _, errText := cli(t, "harvest", "-q", "--retries", "1", srv.URL+"/items?limit=100", "-o", out); code != exitInterrupted {
		t.Fatalf("exit %d, %q; want 3", code, errText)
	}
	st, err := loadState(statePath(out))
	if err != nil || st == nil || st.Done != 6 || st.Rows != 600 {
		t.Fatalf("state: %+v, %v; want 6 pages, 600 rows", st, err)
	}
	if fi, err := os.Stat(partialPath(out)); err != nil || fi.Size() != st.Offset {
		t.Fatalf("partial file %v, state offset %d: want them equal", fi.Size(), st.Offset)
	}
}

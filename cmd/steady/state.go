package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/steadyhttp/steady/credentials"
)

// harvestState is what --resume needs after an interruption: where to
// continue, and how much of the partial file holds whole pages. It is
// rewritten atomically, after the pages it counts are on disk (see
// checkpoint), so it is right even when the process is killed.
type harvestState struct {
	Version int    `json:"version"`
	URL     string `json:"url"`   // the harvest's first URL
	Pages   string `json:"pages"` // the --pages strategy
	Items   string `json:"items"`
	Format  string `json:"format"`
	MaxRows int    `json:"max_rows,omitempty"`
	Next    string `json:"next"` // the page to fetch next
	// NextRange is the Range header of the page to fetch next, for
	// --pages range; "" for the other styles.
	NextRange string `json:"next_range,omitempty"`
	Done      int    `json:"pages_done"`
	Rows      int64  `json:"rows"`
	Offset    int64  `json:"offset"`          // bytes of the partial file that hold whole pages
	Total     int64  `json:"total,omitempty"` // rows the server announced; 0: none
	// Columns is the CSV header written, nil while none is: an empty
	// list is a header of _extra alone.
	Columns []string `json:"columns"`
	// ResumeAt is when a parked harvest may continue (RFC 3339, UTC, to
	// the second): a --resume before it waits for it (park.go).
	ResumeAt string `json:"resume_at,omitempty"`

	// An incremental harvest (--since-field, since.go): the field and the
	// parameter; the floor this run asked for ("" on a first run) and the
	// digests of the last run's rows at it, which are skipped when sent
	// again; the highest value written so far and the digests of the rows
	// at it; the rows the output held before this run, and the rows
	// skipped as sent again.
	SinceField   string   `json:"since_field,omitempty"`
	SinceParam   string   `json:"since_param,omitempty"`
	SinceFloor   string   `json:"since_floor,omitempty"`
	SinceSeen    []string `json:"since_seen,omitempty"`
	SinceMax     string   `json:"since_max,omitempty"`
	SinceEdge    []string `json:"since_edge,omitempty"`
	RowsBefore   int64    `json:"rows_before,omitempty"`
	SinceSkipped int64    `json:"since_skipped,omitempty"`
}

const stateVersion = 1

func partialPath(out string) string { return out + ".partial" }
func statePath(out string) string   { return out + ".state.json" }

// stripCredentials removes credential-shaped query parameters, and any
// parameter holding one of the client's secrets whatever its name, so that
// a key a server echoed into a next link never reaches the disk. The
// credentials layer adds the configured key back on the way out.
func stripCredentials(u *url.URL, red *credentials.Redactor) string {
	if u == nil {
		return ""
	}
	c := *red.SealPath(red.KeyFree(u))
	c.User = nil
	q := c.Query()
	changed := false
	for k := range q {
		if credentials.IsCredentialName(k) {
			q.Del(k)
			changed = true
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// keyFree is the next URL as the server gave it, less the client's
// secrets, found by value (ADR 308): a parameter named token, key or sig
// is as likely a page's continuation as a credential, and dropping it by
// name would make a resume start the walk again. A secret the server put
// in the path is sealed, its place marked, and put back by unsealNext
// (ADR 0354): the path is the page's address, which dropping would break.
func keyFree(u *url.URL, red *credentials.Redactor) string {
	c := *red.SealPath(red.KeyFree(u))
	c.User = nil
	return c.String()
}

// unsealNext is a saved next URL with the secrets keyFree sealed out of
// its path put back, ready to be requested.
func unsealNext(next string, red *credentials.Redactor, state string) (string, error) {
	u, err := url.Parse(next)
	if err != nil {
		return "", usagef("the state file %s names a next page that is not a URL; it is damaged or was edited, use --force to start over", state)
	}
	back, err := red.UnsealPath(u)
	if err != nil {
		return "", usagef("the next page saved in %s carries an API key in its path, and this run does not have it (%v): set the same STEADY_API_KEY and -H headers as the interrupted run", state, err)
	}
	return back.String(), nil
}

func loadState(path string) (*harvestState, error) {
	b, err := readPrivate(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s harvestState
	if err := json.Unmarshal(b, &s); err != nil || s.Version != stateVersion || s.Next == "" ||
		s.Offset < 0 || s.Rows < 0 || s.Done < 0 || s.Total < 0 {
		return nil, usagef("the state file %s is damaged or from another version; use --force to start over", path)
	}
	return &s, nil
}

func (s *harvestState) save(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, b); err != nil {
		return fmt.Errorf("saving the harvest state: %w", err)
	}
	return nil
}

// checkpoint is the one place that decides when the state is written, and
// the order of the writes that make pages durable (ADR 141): the pages'
// bytes are flushed to the file and fsynced before the state that counts
// them is written (temporary file, fsync, rename, fsync of the directory),
// so a crash or power loss at any point leaves a state whose offset the
// file holds.
//
// It writes the state once every pages pages or interval, whichever comes
// first, not after every page, and in the background while the harvest
// goes on writing (ADR 192): a crash costs at most the pages since the last
// state began, fetched again, and every other way a harvest ends (a failed
// write, a failed request, Ctrl-C) records every page whose bytes reached
// the file first (flush). Appending while a state is written is safe: the
// fsync covers at least the bytes the state counts, and a resume cuts the
// file back to them.
type checkpoint struct {
	file     *os.File // nil: no file, nothing to record
	path     string
	out      *byteCounter // the bytes that reached the file
	sink     sink
	pages    int           // write at least every this many pages
	interval time.Duration // and at least this often while pages arrive

	// marks[0] is the state last begun; then one for each page written
	// since, with the offset where its bytes end.
	marks []mark
	last  time.Time // when the last state began

	wg  sync.WaitGroup // the state being written, if any
	mu  sync.Mutex
	err error // the failure of a state written in the background
}

type mark struct {
	end int64
	st  harvestState // Columns is set once and never modified: sharing it is safe
}

// statePages and stateInterval bound the work a crash can cost.
const (
	statePages    = 1000
	stateInterval = time.Second
)

// newCheckpoint starts from st, the state on disk, which counts the file's
// first st.Offset bytes.
func newCheckpoint(file *os.File, path string, out *byteCounter, s sink, st *harvestState, now time.Time) *checkpoint {
	return &checkpoint{file: file, path: path, out: out, sink: s, pages: statePages, interval: stateInterval,
		marks: []mark{{end: st.Offset, st: *st}}, last: now}
}

// pageDone notes that st's pages are all written to the sink, and starts
// writing st when pages pages or interval have passed since the last state
// began, after waiting for that one if it is still being written: a crash
// never costs more than pages pages. It reports the failure of an earlier
// state, if one failed.
func (c *checkpoint) pageDone(st *harvestState, now time.Time) error {
	if c.file == nil {
		return nil
	}
	buffered, err := c.sink.buffered()
	if err != nil {
		return fmt.Errorf("writing %s: %w", c.file.Name(), err)
	}
	st.Offset = c.out.n + int64(buffered)
	c.marks = append(c.marks, mark{end: st.Offset, st: *st})
	if len(c.marks)-1 < c.pages && now.Sub(c.last) < c.interval {
		return nil
	}
	if err := c.sink.flush(); err != nil {
		return fmt.Errorf("writing %s: %w", c.file.Name(), err)
	}
	if err := c.wait(); err != nil {
		return err
	}
	snap := c.begin(len(c.marks)-1, now)
	c.wg.Go(func() {
		if err := c.record(snap); err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
		}
	})
	return nil
}

// begin makes marks[i] the state last begun and returns a copy of it.
func (c *checkpoint) begin(i int, now time.Time) *harvestState {
	snap := c.marks[i].st
	c.marks = append(c.marks[:0], c.marks[i])
	c.last = now
	return &snap
}

// wait returns once no state is being written, with the failure of the
// last one, if it failed. Nothing may remove or replace the state file
// while one is.
func (c *checkpoint) wait() error {
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// flush ends a harvest that stopped early, keeping everything it wrote: it
// flushes the sink, cuts off whatever follows the last page whose bytes
// all reached the file (a page a write failed in, or one cut short),
// records that page's state unless it is the one last begun, and sets *st
// back to it.
func (c *checkpoint) flush(st *harvestState, now time.Time) error {
	ferr := c.sink.flush()
	if c.file == nil {
		return ferr
	}
	if err := c.wait(); err != nil {
		return err
	}
	i := len(c.marks) - 1
	for i > 0 && c.marks[i].end > c.out.n {
		i--
	}
	m := c.marks[i]
	*st = m.st
	if c.out.n > m.end {
		if err := c.file.Truncate(m.end); err != nil {
			return fmt.Errorf("writing %s: %w", c.file.Name(), err)
		}
	}
	if i == 0 {
		return nil // recorded already
	}
	return c.record(c.begin(i, now))
}

func (c *checkpoint) record(st *harvestState) error {
	if err := c.file.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", c.file.Name(), err)
	}
	return st.save(c.path)
}

// byteCounter counts the bytes its writer accepted: how much of a
// harvest reached the file.
type byteCounter struct {
	w io.Writer
	n int64
}

func (c *byteCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

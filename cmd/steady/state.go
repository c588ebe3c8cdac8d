package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"

	"github.com/steadyhttp/steady/credentials"
)

// harvestState is what --resume needs after an interruption: where to
// continue, and how much of the partial file holds whole pages. It is
// rewritten (atomically) after every page, so it is right even when the
// process is killed.
type harvestState struct {
	Version int    `json:"version"`
	URL     string `json:"url"`   // the harvest's first URL
	Pages   string `json:"pages"` // the --pages strategy
	Items   string `json:"items"`
	Format  string `json:"format"`
	MaxRows int    `json:"max_rows,omitempty"`
	Next    string `json:"next"` // the page to fetch next
	Done    int    `json:"pages_done"`
	Rows    int64  `json:"rows"`
	Offset  int64  `json:"offset"`          // bytes of the partial file that hold whole pages
	Total   int64  `json:"total,omitempty"` // rows the server announced; 0: none
	// Columns is the CSV header written, nil while none is: an empty
	// list is a header of _extra alone.
	Columns []string `json:"columns"`
}

const stateVersion = 1

func partialPath(out string) string { return out + ".partial" }
func statePath(out string) string   { return out + ".state.json" }

// stripCredentials removes credential-shaped query parameters, so that a
// key a server echoed into a next link never reaches the disk. The
// credentials layer adds the configured key back on the way out.
func stripCredentials(u *url.URL) string {
	c := *u
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

func loadState(path string) (*harvestState, error) {
	b, err := readPrivate(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s harvestState
	if err := json.Unmarshal(b, &s); err != nil || s.Version != stateVersion || s.Next == "" {
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
// the order of the writes that make a page durable (ADR 141): the page's
// bytes are fsynced before the state that counts them is written
// (temporary file, fsync, rename, fsync of the directory), so a crash or
// power loss at any point leaves a state whose offset the file holds. It
// writes after every page; writing less often would change only pageDone.
type checkpoint struct {
	file  *os.File // nil: no file, nothing to record
	path  string
	saved int64 // the offset the state on disk records
}

func newCheckpoint(file *os.File, path string, saved int64) *checkpoint {
	return &checkpoint{file: file, path: path, saved: saved}
}

// pageDone records st, whose pages are all written to the file.
func (c *checkpoint) pageDone(st *harvestState) error {
	if c.file == nil {
		return nil
	}
	if err := c.file.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", c.file.Name(), err)
	}
	off, err := c.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("writing %s: %w", c.file.Name(), err)
	}
	st.Offset = off
	if err := st.save(c.path); err != nil {
		return err
	}
	c.saved = off
	return nil
}

// rollback cuts the file back to what the state on disk records, after a
// failed write, so that the rows kept in it are whole.
func (c *checkpoint) rollback() {
	if c.file != nil {
		_ = c.file.Truncate(c.saved)
	}
}

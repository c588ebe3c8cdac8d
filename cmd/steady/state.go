package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/steadyhttp/steady/credentials"
)

// harvestState is what --resume needs after an interruption: where to
// continue, and how much of the partial file holds whole pages. It is
// rewritten (atomically) after every page, so it is right even when the
// process is killed.
type harvestState struct {
	Version int      `json:"version"`
	URL     string   `json:"url"`   // the harvest's first URL
	Pages   string   `json:"pages"` // the --pages strategy
	Items   string   `json:"items"`
	Format  string   `json:"format"`
	MaxRows int      `json:"max_rows,omitempty"`
	Next    string   `json:"next"` // the page to fetch next
	Done    int      `json:"pages_done"`
	Rows    int64    `json:"rows"`
	Offset  int64    `json:"offset"` // bytes of the partial file that hold whole pages
	Columns []string `json:"columns,omitempty"`
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
	c := *red.KeyFree(u)
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
	b, err := os.ReadFile(path)
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
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("saving the harvest state: %w", err)
	}
	return nil
}

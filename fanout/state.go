package fanout

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// stateFormat names the layout of a saved state; a file with another value
// is refused rather than guessed at.
const stateFormat = "steady/fanout-state/v1"

// Causes of a [*StateError]; match them with errors.Is.
var (
	// ErrStateMismatch: the saved state belongs to another item list.
	ErrStateMismatch = errors.New("saved state does not match the items")
	// ErrStateFormat: the file is not a fan-out state this version reads,
	// or it contradicts itself.
	ErrStateFormat = errors.New("not a valid fan-out state")
)

// StateError reports a state file that could not be written or read: Path
// names the file, and Err is [ErrStateMismatch], [ErrStateFormat] (each with
// the detail), an encoding error, or the file system's error (errors.Is with
// fs.ErrNotExist tells a missing file).
type StateError struct {
	Path string
	Err  error
}

func (e *StateError) Error() string { return "fanout: state file " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *StateError) Unwrap() error { return e.Err }

// savedState is the file's layout (docs/adr/0072): only what cannot be
// recomputed is stored. The missing items are those not in Completed, so
// the unfinished ones are not listed, and the failed ones only through the
// failures' text.
type savedState[R any] struct {
	Format string `json:"format"`
	// Items and ItemsSHA256 identify the item list: its length, and a
	// digest of the JSON encoding of each item.
	Items       int       `json:"items"`
	ItemsSHA256 string    `json:"items_sha256"`
	SavedAt     time.Time `json:"saved_at"`
	// RetryAfter is the server's longest wait hint, as a Go duration.
	RetryAfter string           `json:"retry_after,omitempty"`
	Completed  []savedResult[R] `json:"completed"`
	Failures   []savedFailure   `json:"failures,omitempty"`
}

type savedResult[R any] struct {
	Index  int `json:"index"`
	Result R   `json:"result"`
}

type savedFailure struct {
	Index int    `json:"index"`
	Error string `json:"error"`
}

// savedError stands for a failure read back from a file: its text survives,
// its type does not.
type savedError string

func (e savedError) Error() string { return string(e) }

// Save writes the completed results and the failures to path as JSON, so the
// run can resume in another process ([Load]). Both T and R must encode as
// JSON, and R must decode back to an equal value. The file is written
// atomically: to a temporary file in the same directory, synced, then
// renamed over path, so a crash leaves either the old state or the new one.
// It is created readable by its owner only, since results may be private.
func (e *Interrupted[T, R]) Save(path string) error {
	digest, err := itemsDigest(e.items)
	if err != nil {
		return &StateError{Path: path, Err: err}
	}
	st := savedState[R]{
		Format:      stateFormat,
		Items:       e.total,
		ItemsSHA256: digest,
		SavedAt:     time.Now().UTC(),
		Completed:   make([]savedResult[R], 0, len(e.Completed)),
	}
	if e.retryAfter > 0 {
		st.RetryAfter = e.retryAfter.String()
	}
	for i, r := range e.Completed {
		st.Completed = append(st.Completed, savedResult[R]{Index: i, Result: r})
	}
	slices.SortFunc(st.Completed, func(a, b savedResult[R]) int { return a.Index - b.Index })
	for _, f := range e.Failures {
		st.Failures = append(st.Failures, savedFailure{Index: f.Index, Error: f.Err.Error()})
	}
	data, err := json.Marshal(st)
	if err != nil {
		return &StateError{Path: path, Err: fmt.Errorf("encoding the results: %w", err)}
	}
	if err := writeAtomic(path, data); err != nil {
		return &StateError{Path: path, Err: err}
	}
	return nil
}

// Load reads a state written by [Interrupted.Save] for items, which must be
// the item list of the saved run: the same length and, item by item, the same
// JSON encoding; otherwise the error is a [*StateError] matching
// [ErrStateMismatch]. Resume the returned state with
// [Interrupted.ResumeWith].
func Load[T, R any](path string, items []T) (*Interrupted[T, R], error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &StateError{Path: path, Err: err}
	}
	in, err := decodeState[T, R](data, items)
	if err != nil {
		return nil, &StateError{Path: path, Err: err}
	}
	return in, nil
}

// decodeState parses and checks a saved state against items.
func decodeState[T, R any](data []byte, items []T) (*Interrupted[T, R], error) {
	var st savedState[R]
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStateFormat, err)
	}
	if st.Format != stateFormat {
		return nil, fmt.Errorf("%w: format is %q, want %q", ErrStateFormat, st.Format, stateFormat)
	}
	if st.Items != len(items) {
		return nil, fmt.Errorf("%w: saved for %d items, given %d", ErrStateMismatch, st.Items, len(items))
	}
	digest, err := itemsDigest(items)
	if err != nil {
		return nil, err
	}
	if st.ItemsSHA256 != digest {
		return nil, fmt.Errorf("%w: the items differ from those the state was saved for", ErrStateMismatch)
	}
	in := &Interrupted[T, R]{
		Completed: make(map[int]R, len(st.Completed)),
		total:     len(items),
		items:     items,
	}
	if st.RetryAfter != "" {
		d, err := time.ParseDuration(st.RetryAfter)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%w: retry_after %q is not a duration of 0 or more", ErrStateFormat, st.RetryAfter)
		}
		in.retryAfter = d
	}
	for _, c := range st.Completed {
		if err := checkIndex("completed", c.Index, len(items)); err != nil {
			return nil, err
		}
		if _, dup := in.Completed[c.Index]; dup {
			return nil, fmt.Errorf("%w: item %d is completed twice", ErrStateFormat, c.Index)
		}
		in.Completed[c.Index] = c.Result
	}
	failed := make(map[int]bool, len(st.Failures))
	for _, f := range st.Failures {
		if err := checkIndex("failures", f.Index, len(items)); err != nil {
			return nil, err
		}
		if _, done := in.Completed[f.Index]; done || failed[f.Index] {
			return nil, fmt.Errorf("%w: failed item %d is also completed or failed twice", ErrStateFormat, f.Index)
		}
		failed[f.Index] = true
		in.Failures = append(in.Failures, &ItemError{Index: f.Index, Err: savedError(f.Error)})
	}
	slices.SortFunc(in.Failures, func(a, b *ItemError) int { return a.Index - b.Index })
	in.Failed = indexes(in.Failures)
	for i := range items {
		if _, done := in.Completed[i]; !done && !failed[i] {
			in.Unfinished = append(in.Unfinished, i)
		}
	}
	return in, nil
}

func checkIndex(field string, i, n int) error {
	if i < 0 || i >= n {
		return fmt.Errorf("%w: %s index %d is outside the %d items", ErrStateFormat, field, i, n)
	}
	return nil
}

// itemsDigest identifies an item list: SHA-256 over each item's JSON
// encoding, each prefixed by its length so that no two lists collide by
// shifting bytes between neighbours.
func itemsDigest[T any](items []T) (string, error) {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for i, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return "", fmt.Errorf("encoding item %d: %w", i, err)
		}
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))])
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeAtomic replaces path with data: a crash leaves the old file or the
// new one, never a torn mix.
func writeAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

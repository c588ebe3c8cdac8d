package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// sinceSpec is --since-field and --since-param: an incremental harvest
// (ADR 0353). A complete run records, beside the output, the highest value
// of the field among the rows it wrote; the next run asks for
// PARAM=that value, appends the rows it receives to the output, and
// refuses a row older than it.
type sinceSpec struct {
	field string
	path  []string
	param string
}

// maxEdge bounds the rows at the highest value whose digests a record
// keeps: the rows an inclusive server sends again, and the next run skips.
const maxEdge = 10_000

// sinceRecord is FILE.since.json: what the next incremental run continues.
type sinceRecord struct {
	Version int    `json:"version"`
	URL     string `json:"url"`
	Field   string `json:"field"`
	Param   string `json:"param"`
	Format  string `json:"format"`
	// Size is the published file's length: a file changed since is not
	// appended to.
	Size int64 `json:"size"`
	// State is the finished harvest's state; its Offset is where the rows
	// end (before a JSON array's closing bracket).
	State harvestState `json:"state"`
}

func sincePath(out string) string { return out + ".since.json" }

// sinceError is a page holding a row older than the run's floor: merging it
// would put old rows after newer ones, or rows again, without a word.
type sinceError struct {
	page, item   int
	field, value string
	floor, param string
}

func (e *sinceError) Error() string {
	return fmt.Sprintf("item %d of page %d has %s %s, older than %s, the highest value of the last run, which this run asked for with %s=%s: the server ignores %s or does not order by %s; the page is not merged",
		e.item, e.page, e.field, e.value, e.floor, e.param, e.floor, e.param, e.field)
}

func parseSince(field, param string) (*sinceSpec, error) {
	switch {
	case field == "" && param == "":
		return nil, nil
	case field == "" || param == "":
		return nil, usagef("--since-field and --since-param go together: the field whose highest value is kept, and the parameter that asks for rows after it")
	}
	if err := checkItemsPath(field); err != nil {
		return nil, usagef("--since-field %q: a key of the path is empty; want a dotted path such as updated_at or meta.modified", field)
	}
	return &sinceSpec{field: field, path: strings.Split(field, "."), param: param}, nil
}

// checkFormat refuses the outputs an incremental run cannot append to.
func (s *sinceSpec) checkFormat(format, out string) error {
	if s == nil {
		return nil
	}
	switch format {
	case fmtJSONL, fmtJSON, fmtGzip, fmtZstd:
	default:
		return usagef("--since-field appends to the output of the last run, which a %s file cannot take without rewriting it; use .jsonl, .json, .jsonl.gz or .jsonl.zst", format)
	}
	if out == "" || out == "-" {
		return usagef("--since-field needs -o: the highest value is recorded beside the output file")
	}
	return nil
}

// check applies the floor to a page before it is written: a row older than
// st.SinceFloor fails the page; a row at the floor that the last run wrote
// (the same bytes) is dropped, as an inclusive server sends it again. The
// highest value and the rows at it move into st.
func (s *sinceSpec) check(st *harvestState, items rows) (rows, error) {
	if s == nil {
		return items, nil
	}
	var kept rawRows
	dropped := false
	for i, it := range items.All() {
		v, ok, err := s.value(it)
		if err != nil {
			return nil, fmt.Errorf("item %d of page %d: %w", i+1, st.Done+1, err)
		}
		if !ok {
			kept = append(kept, it)
			continue
		}
		digest := rowDigest(it)
		if st.SinceFloor != "" {
			switch c := compareSince(v, st.SinceFloor); {
			case c < 0:
				return nil, &sinceError{page: st.Done + 1, item: i + 1, field: s.field, value: v, floor: st.SinceFloor, param: s.param}
			case c == 0 && slices.Contains(st.SinceSeen, digest):
				dropped = true
				st.SinceSkipped++
				continue
			}
		}
		kept = append(kept, it)
		switch c := compareSince(v, st.SinceMax); {
		case st.SinceMax == "" || c > 0:
			st.SinceMax, st.SinceEdge = v, []string{digest}
		case c == 0 && len(st.SinceEdge) < maxEdge:
			// A fresh slice: earlier states share the old one.
			st.SinceEdge = append(slices.Clip(st.SinceEdge), digest)
		}
	}
	if dropped {
		return kept, nil
	}
	return items, nil
}

// value is the field's value in item as text: a string as it reads, a
// number as written; ok is false when the item has no such field or it is
// null.
func (s *sinceSpec) value(item json.RawMessage) (string, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(item))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false, err
	}
	for _, k := range s.path {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false, nil
		}
		if v, ok = obj[k]; !ok {
			return "", false, nil
		}
	}
	switch x := v.(type) {
	case nil:
		return "", false, nil
	case string:
		return x, true, nil
	case json.Number:
		return x.String(), true, nil
	}
	return "", false, fmt.Errorf("--since-field %s is %s, not a string or a number, so it cannot be ordered", s.field, describeJSON(v))
}

func describeJSON(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	}
	return "an object"
}

func rowDigest(item json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, item) != nil {
		b.Reset()
		b.Write(item)
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:16])
}

// compareSince orders two values of the field: as numbers when both parse
// as numbers, as instants when both parse as RFC 3339 times, else as
// strings, byte by byte. "" is below every value.
func compareSince(a, b string) int {
	switch {
	case a == b:
		return 0
	case b == "":
		return 1
	case a == "":
		return -1
	}
	if x, ok := new(big.Rat).SetString(a); ok {
		if y, ok := new(big.Rat).SetString(b); ok {
			return x.Cmp(y)
		}
	}
	if x, err := time.Parse(time.RFC3339Nano, a); err == nil {
		if y, err := time.Parse(time.RFC3339Nano, b); err == nil {
			return x.Compare(y)
		}
	}
	return strings.Compare(a, b)
}

// loadSince reads the record of the last complete run into out; nil when
// there is none.
func loadSince(out string) (*sinceRecord, error) {
	b, err := readPrivate(sincePath(out))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r sinceRecord
	if err := json.Unmarshal(b, &r); err != nil || r.Version != stateVersion || r.Size < r.State.Offset || r.State.Offset < 0 {
		return nil, usagef("the record %s is damaged or from another version; use --force to start over", sincePath(out))
	}
	return &r, nil
}

// continueSince prepares the partial file of an incremental run that
// continues rec: the output's rows copied into it, and a state whose next
// page asks for the rows after the last run's highest value. fresh is the
// state this run's flags give.
func (j *job) continueSince(rec *sinceRecord, fresh *harvestState) (*os.File, *harvestState, error) {
	rp := sincePath(j.out)
	switch {
	case rec.URL != fresh.URL || rec.Field != j.since.field || rec.Param != j.since.param || rec.Format != fresh.Format:
		return nil, nil, usagef("the last incremental harvest into %s (%s) was made with another URL, --since-field, --since-param or format; repeat its command line, or start over with --force", j.out, rp)
	}
	in, err := openPrivate(j.out, false)
	if err != nil {
		return nil, nil, usagef("cannot continue %s: %v", j.out, unwrapPathError(err))
	}
	defer func() { _ = in.Close() }()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() != rec.Size {
		return nil, nil, usagef("%s is not the file the last incremental harvest published (%s records %d bytes): it was changed or replaced; start over with --force", j.out, rp, rec.Size)
	}
	f, err := openPrivate(partialPath(j.out), true)
	if err != nil {
		return nil, nil, usagef("cannot write the output %s: %v", partialPath(j.out), unwrapPathError(err))
	}
	if _, err := io.CopyN(f, in, rec.State.Offset); err != nil {
		_ = f.Close()
		_ = os.Remove(partialPath(j.out))
		return nil, nil, fmt.Errorf("copying %s to continue it: %w", j.out, err)
	}
	st := rec.State
	next, err := url.Parse(fresh.URL)
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	q := next.Query()
	q.Set(j.since.param, st.SinceMax)
	next.RawQuery = q.Encode()
	st.Next, st.NextRange, st.Total = next.String(), "", 0
	st.SinceFloor, st.SinceSeen, st.SinceSkipped = st.SinceMax, st.SinceEdge, 0
	st.RowsBefore = st.Rows
	if err := st.save(statePath(j.out)); err != nil {
		_ = f.Close()
		_ = os.Remove(partialPath(j.out))
		return nil, nil, usagef("cannot write the output %s: %v", statePath(j.out), unwrapPathError(err))
	}
	return f, &st, nil
}

// saveSince records a finished incremental run: st with its rows' end at
// rowsEnd, and the published file's length.
func (j *job) saveSince(st *harvestState, rowsEnd int64) error {
	if j.since == nil || j.out == "" {
		return nil
	}
	fi, err := os.Stat(j.out)
	if err != nil {
		return err
	}
	rec := sinceRecord{Version: stateVersion, URL: st.URL, Field: j.since.field, Param: j.since.param,
		Format: st.Format, Size: fi.Size(), State: *st}
	rec.State.Offset, rec.State.Next, rec.State.NextRange = rowsEnd, "", ""
	rec.State.SinceFloor, rec.State.SinceSeen = "", nil
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(sincePath(j.out), b); err != nil {
		return fmt.Errorf("%s is complete, but the record of its highest %s could not be written, so the next run cannot continue it: %w", j.out, j.since.field, err)
	}
	return nil
}

package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// A sink writes items in one output format. Items arrive a page at a time;
// flush after a page makes everything so far durable in the writer below.
type sink interface {
	writePage(page int, items []json.RawMessage) error
	flush() error
	columns() []string
}

func newSink(format string, w io.Writer, cols []string) sink {
	bw := bufio.NewWriterSize(w, 64<<10)
	if format == "csv" {
		s := &csvSink{bw: bw, w: csv.NewWriter(bw)}
		if cols != nil {
			s.setColumns(cols, false)
		}
		return s
	}
	return &jsonlSink{bw: bw}
}

// jsonlSink writes one compact JSON value a line.
type jsonlSink struct {
	bw  *bufio.Writer
	buf bytes.Buffer
}

func (s *jsonlSink) writePage(page int, items []json.RawMessage) error {
	for i, it := range items {
		s.buf.Reset()
		if err := json.Compact(&s.buf, it); err != nil {
			return fmt.Errorf("item %d of page %d is not valid JSON: %w", i+1, page, err)
		}
		s.buf.WriteByte('\n')
		if _, err := s.bw.Write(s.buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

func (s *jsonlSink) flush() error      { return s.bw.Flush() }
func (s *jsonlSink) columns() []string { return nil }

// extraColumn holds, as a JSON object, the fields of an item that the header
// does not name: the header is the union of the keys of the first page, and
// a field first seen later is kept rather than dropped.
const extraColumn = "_extra"

// csvSink writes items that are JSON objects as CSV rows. Strings are
// written as they are, null as an empty cell, other values as their JSON
// text.
type csvSink struct {
	bw    *bufio.Writer
	w     *csv.Writer
	cols  []string
	index map[string]int
	row   []string
}

func (s *csvSink) setColumns(cols []string, writeHeader bool) error {
	s.cols = cols
	if s.cols == nil {
		s.cols = []string{}
	}
	s.index = make(map[string]int, len(cols))
	for i, c := range cols {
		s.index[c] = i
	}
	s.row = make([]string, len(cols)+1)
	if writeHeader {
		return s.w.Write(append(append([]string(nil), cols...), extraColumn))
	}
	return nil
}

func (s *csvSink) writePage(page int, items []json.RawMessage) error {
	parsed := make([][]field, len(items))
	for i, it := range items {
		f, err := objectFields(it)
		if err != nil {
			return fmt.Errorf("item %d of page %d: %w; CSV output needs JSON objects (use a .jsonl output)", i+1, page, err)
		}
		parsed[i] = f
	}
	if s.cols == nil {
		if len(parsed) == 0 {
			// No rows, no columns to offer: the header waits for the
			// first rows.
			return nil
		}
		cols := []string{}
		seen := map[string]bool{}
		for _, fs := range parsed {
			for _, f := range fs {
				if !seen[f.key] {
					seen[f.key] = true
					cols = append(cols, f.key)
				}
			}
		}
		if err := s.setColumns(cols, true); err != nil {
			return err
		}
	}
	for _, fs := range parsed {
		clear(s.row)
		var extra map[string]json.RawMessage
		for _, f := range fs {
			i, ok := s.index[f.key]
			if !ok {
				if extra == nil {
					extra = map[string]json.RawMessage{}
				}
				extra[f.key] = f.raw
				continue
			}
			s.row[i] = cell(f.raw)
		}
		if extra != nil {
			b, err := json.Marshal(extra)
			if err != nil {
				return err
			}
			s.row[len(s.cols)] = string(b)
		}
		if len(s.row) == 1 && s.row[0] == "" {
			// A row of one empty cell would be a blank line, which CSV
			// readers skip: write it quoted, so that it stays a row.
			s.w.Flush()
			if _, err := s.bw.WriteString("\"\"\n"); err != nil {
				return err
			}
			continue
		}
		if err := s.w.Write(s.row); err != nil {
			return err
		}
	}
	return nil
}

func (s *csvSink) flush() error {
	s.w.Flush()
	if err := s.w.Error(); err != nil {
		return err
	}
	return s.bw.Flush()
}

func (s *csvSink) columns() []string { return s.cols }

type field struct {
	key string
	raw json.RawMessage
}

// objectFields returns an object's fields in their order in the text.
func objectFields(raw json.RawMessage) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fields = append(fields, field{key, v})
	}
	return fields, nil
}

func cell(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	switch {
	case t == "null":
		return ""
	case strings.HasPrefix(t, `"`):
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case strings.HasPrefix(t, "{"), strings.HasPrefix(t, "["):
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			return b.String()
		}
	}
	return t
}

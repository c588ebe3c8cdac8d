package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// end flushes the rows and, when a row of a file needed _extra after a
// header without it, rewrites the file with _extra in the header and every
// row padded to it (ADR 0326). The rewrite goes to a file beside the
// partial one, which replaces it only once complete and synced: a crash
// leaves the partial file as it was.
func (s *csvSink) end() error {
	if err := s.flush(); err != nil {
		return err
	}
	if s.partial == "" || s.wide || !s.extra {
		return nil
	}
	tmp := s.partial + ".header"
	header := make([]string, 0, len(s.cols)+1)
	for _, c := range s.cols {
		header = append(header, s.safe(c))
	}
	if err := widen(s.partial, tmp, append(header, extraColumn)); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, s.partial)
}

// widen copies the CSV file from into to, with header in place of its
// first record and every other record padded with empty cells to its width.
func widen(from, to string, header []string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := openPrivate(to, true)
	if err != nil {
		return err
	}
	defer func() { _ = out.Close() }()
	r := csv.NewReader(bufio.NewReaderSize(in, 64<<10))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	bw := bufio.NewWriterSize(out, 64<<10)
	w := csv.NewWriter(bw)
	if _, err := r.Read(); err != nil {
		return fmt.Errorf("reading the header of %s: %w", from, err)
	}
	if err := w.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", from, err)
		}
		clear(row)
		copy(row, rec)
		if err := writeRow(w, bw, row); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return out.Sync()
}

// flattened replaces the fields whose values are objects with their own
// fields, named by dotted paths (a.b.c), recursively. A GeoJSON geometry
// (an object named geometry with a type) stays one cell of JSON text, and
// so does an empty object.
func flattened(prefix string, fields []field) ([]field, error) {
	var out []field
	for _, f := range fields {
		key := prefix + f.key
		raw := bytes.TrimSpace(f.raw)
		if len(raw) == 0 || raw[0] != '{' {
			out = append(out, field{key, f.raw})
			continue
		}
		inner, err := objectFields(raw)
		if err != nil {
			return nil, err
		}
		if len(inner) == 0 || f.key == "geometry" && hasType(inner) {
			out = append(out, field{key, f.raw})
			continue
		}
		sub, err := flattened(key+".", inner)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

func hasType(fields []field) bool {
	for _, f := range fields {
		if f.key == "type" {
			var s string
			return json.Unmarshal(f.raw, &s) == nil
		}
	}
	return false
}

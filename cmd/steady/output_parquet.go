package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// fmtParquet is Parquet output (ADR 0350).
const fmtParquet = "parquet"

// parquetSink stages a harvest's rows as JSONL in the partial file, so that
// every checkpoint, kill and resume works exactly as for JSONL, and builds
// the Parquet file from the staged rows when the walk is complete. A
// resumed Parquet harvest is so rewritten from the saved rows, never cut:
// the Parquet file exists only once, whole, beside the partial file, and
// is what finish publishes.
type parquetSink struct {
	jsonlSink
	partial string
}

// writePage refuses an item that is not a JSON object as its page is
// written, rather than at the end: a Parquet row is a record of fields.
func (s *parquetSink) writePage(page int, items rows) error {
	for i, it := range items.All() {
		if t := bytes.TrimSpace(it); len(t) == 0 || t[0] != '{' {
			return fmt.Errorf("item %d of page %d is not a JSON object; Parquet output needs JSON objects (use a .jsonl output)", i+1, page)
		}
	}
	return s.jsonlSink.writePage(page, items)
}

func (s *parquetSink) end() error {
	if err := s.flush(); err != nil {
		return err
	}
	return buildParquet(s.partial, builtPath(s.partial))
}

// builtPath is where the Parquet file is built from the staged rows.
func builtPath(partial string) string { return partial + ".parquet" }

// A kind is what a column holds; a column's kind is the join of its
// values' kinds, widened as rows differ: null joins as nothing; int with
// float is float; any other mix, and any object or array, is string (the
// value's JSON text, a string's own text). So no value is ever dropped or
// rounded to fit: an integer past int64 is a string.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindInt
	kindFloat
	kindString
)

func joinKinds(a, b kind) kind {
	switch {
	case a == b || b == kindNull:
		return a
	case a == kindNull:
		return b
	case a == kindInt && b == kindFloat, a == kindFloat && b == kindInt:
		return kindFloat
	}
	return kindString
}

// kindOf is the kind of one JSON value.
func valueKind(raw []byte) kind {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return kindNull
	}
	switch raw[0] {
	case 'n':
		return kindNull
	case 't', 'f':
		return kindBool
	case '"', '{', '[':
		return kindString
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return kindInt
	}
	if !bytes.ContainsAny(raw, ".eE") {
		return kindString // a whole number past int64, which a double would round
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && !math.IsInf(f, 0) {
		return kindFloat
	}
	return kindString
}

// column is one column of the inferred schema, in the order first seen.
type column struct {
	name  string
	kind  kind
	index int // the leaf's index in the Parquet schema
}

// buildParquet writes the Parquet file to from the JSONL rows in from:
// a first pass infers the schema from every row, a second writes them, in
// row groups of at most parquetGroupRows. Every column is optional: a row
// without a field, or with null, has none.
func buildParquet(from, to string) error {
	cols, err := inferSchema(from)
	if err != nil {
		return err
	}
	schema := parquetSchema(cols)
	index := make(map[string]*column, len(cols))
	for i := range cols {
		leaf, _ := schema.Lookup(cols[i].name)
		cols[i].index = leaf.ColumnIndex
		index[cols[i].name] = &cols[i]
	}
	out, err := openPrivate(to, true)
	if err != nil {
		return err
	}
	defer func() { _ = out.Close() }()
	bw := bufio.NewWriterSize(out, 1<<20)
	w := parquet.NewWriter(bw, schema, parquet.MaxRowsPerRowGroup(parquetGroupRows))
	batch := make([]parquet.Row, 0, 256)
	write := func() error {
		if _, err := w.WriteRows(batch); err != nil {
			return err
		}
		batch = batch[:0]
		return nil
	}
	err = eachRow(from, func(n int64, fields []field) error {
		row := make(parquet.Row, len(cols))
		for _, c := range cols {
			row[c.index] = parquet.NullValue().Level(0, 0, c.index)
		}
		for _, f := range fields {
			c := index[f.key]
			v, ok := parquetValue(c.kind, f.raw)
			if ok {
				row[c.index] = v.Level(0, 1, c.index)
			}
		}
		if batch = append(batch, row); len(batch) == cap(batch) {
			return write()
		}
		return nil
	})
	if err == nil {
		err = write()
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = out.Sync()
	}
	if err != nil {
		_ = os.Remove(to)
		return fmt.Errorf("building the Parquet file: %w", err)
	}
	return out.Close()
}

// parquetGroupRows bounds a row group, and so the memory of building one.
const parquetGroupRows = 64 << 10

// inferSchema reads every staged row and returns the columns with their
// widened kinds.
func inferSchema(path string) ([]column, error) {
	var cols []column
	seen := map[string]int{}
	err := eachRow(path, func(_ int64, fields []field) error {
		for _, f := range fields {
			i, ok := seen[f.key]
			if !ok {
				i = len(cols)
				seen[f.key] = i
				cols = append(cols, column{name: f.key})
			}
			cols[i].kind = joinKinds(cols[i].kind, valueKind(f.raw))
		}
		return nil
	})
	return cols, err
}

func parquetSchema(cols []column) *parquet.Schema {
	g := parquet.Group{}
	for _, c := range cols {
		var leaf parquet.Node
		switch c.kind {
		case kindBool:
			leaf = parquet.Leaf(parquet.BooleanType)
		case kindInt:
			leaf = parquet.Int(64)
		case kindFloat:
			leaf = parquet.Leaf(parquet.DoubleType)
		default: // strings, JSON text, and columns only ever null
			leaf = parquet.String()
		}
		g[c.name] = parquet.Optional(leaf)
	}
	return parquet.NewSchema("row", g)
}

// parquetValue is raw as a value of a column of kind k; ok is false for
// null.
func parquetValue(k kind, raw json.RawMessage) (parquet.Value, bool) {
	raw = bytes.TrimSpace(raw)
	if valueKind(raw) == kindNull {
		return parquet.Value{}, false
	}
	switch k {
	case kindBool:
		return parquet.BooleanValue(raw[0] == 't'), true
	case kindInt:
		n, _ := strconv.ParseInt(string(raw), 10, 64) // the kind says it parses
		return parquet.Int64Value(n), true
	case kindFloat:
		f, _ := strconv.ParseFloat(string(raw), 64)
		return parquet.DoubleValue(f), true
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return parquet.ByteArrayValue([]byte(s)), true
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return parquet.ByteArrayValue(raw), true
	}
	return parquet.ByteArrayValue(b.Bytes()), true
}

// eachRow calls f with the fields of every staged row, a JSON object a
// line; a row that is not one is an error naming it.
func eachRow(path string, f func(n int64, fields []field) error) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	r := bufio.NewReaderSize(in, 1<<20)
	var fields []field
	for n := int64(1); ; n++ {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var ferr error
			fields, ferr = rowFields(line, fields)
			if ferr != nil {
				return fmt.Errorf("row %d: %w; Parquet output needs JSON objects (use a .jsonl output)", n, ferr)
			}
			if ferr := f(n, fields); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// publishBuilt publishes the Parquet file built beside partial, whose
// staged rows it was built from; then the staged rows and the state go.
// Until the rename, a crash leaves the staged rows and the state, and a
// resume builds the file again.
func (j *job) publishBuilt(staged *os.File) error {
	built := builtPath(partialPath(j.out))
	f, err := openPrivate(built, false)
	if err != nil {
		return fmt.Errorf("writing %s: %w", j.out, err)
	}
	err = publishMode(f, j.out)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", j.out, err)
	}
	_ = staged.Close()
	if err := replaceWith(built, j.out); err != nil {
		return err
	}
	if err := j.dropState(); err != nil {
		return err
	}
	_ = os.Remove(partialPath(j.out))
	return nil
}

// rowFields splits a compact JSON object, as the staged rows are written,
// into its fields without decoding them: the walk validated every row. A
// row it cannot split goes to objectFields, which says what is wrong.
func rowFields(row []byte, dst []field) ([]field, error) {
	row = bytes.TrimSpace(row)
	fail := func() ([]field, error) {
		if !json.Valid(row) {
			return nil, errors.New("not valid JSON")
		}
		return objectFields(row)
	}
	if len(row) < 2 || row[0] != '{' || row[len(row)-1] != '}' {
		return fail()
	}
	dst = dst[:0]
	i := 1
	if row[i] == '}' {
		return dst, nil
	}
	for {
		if row[i] != '"' {
			return fail()
		}
		end := stringEnd(row, i)
		if end < 0 || end+1 >= len(row) || row[end+1] != ':' {
			return fail()
		}
		key := string(row[i+1 : end])
		if bytes.IndexByte(row[i:end], '\\') >= 0 {
			if err := json.Unmarshal(row[i:end+1], &key); err != nil {
				return fail()
			}
		}
		start := end + 2
		stop := valueEnd(row, start)
		if stop < 0 {
			return fail()
		}
		dst = append(dst, field{key: key, raw: row[start:stop]})
		switch {
		case stop < len(row)-1 && row[stop] == ',':
			i = stop + 1
		case stop == len(row)-1:
			return dst, nil
		default:
			return fail()
		}
	}
}

// stringEnd is the index of the quote that closes the string opening at
// b[i], -1 when none does.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// valueEnd is the index just past the value starting at b[i] (a ',' or
// the closing '}' of its object follows), -1 when the text ends first.
func valueEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			if j = stringEnd(b, j); j < 0 {
				return -1
			}
		case '{', '[':
			depth++
		case ']':
			depth--
		case '}':
			if depth == 0 {
				return j
			}
			depth--
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

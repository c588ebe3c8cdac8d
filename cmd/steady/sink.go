package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"

	"github.com/steadyhttp/steady/credentials"
)

// A sink writes items in one output format. Items arrive a page at a time;
// flush after a page makes everything so far durable in the writer below.
type sink interface {
	writePage(page int, items rows) error
	// buffered says how many bytes written are not yet in the writer
	// below, once all of them are in the sink's last buffer.
	buffered() (int, error)
	flush() error
	columns() []string
	// end writes what follows the last row (a JSON array's bracket, a
	// CSV header that grew) and flushes.
	end() error
}

// rows are the items of one page: a walk's paginate.Items, or items a sink
// made itself.
type rows interface {
	Len() int
	All() iter.Seq2[int, json.RawMessage]
	// Compact reports that item i is already what appendCompact makes of
	// it, so that it is copied whole.
	Compact(i int) bool
}

// rawRows are items held one slice each, none known to be compact.
type rawRows []json.RawMessage

func (r rawRows) Len() int                             { return len(r) }
func (r rawRows) All() iter.Seq2[int, json.RawMessage] { return slices.All(r) }
func (r rawRows) Compact(int) bool                     { return false }

func newSink(format string, w io.Writer, cols []string) sink {
	bw := bufio.NewWriterSize(w, 64<<10)
	if format == "csv" {
		s := &csvSink{bw: bw, w: csv.NewWriter(bw)}
		if cols != nil {
			_ = s.setColumns(cols, false) // no header to write, nothing to fail
		}
		return s
	}
	return &jsonlSink{bw: bw}
}

// jsonlSink writes one compact JSON value a line.
type jsonlSink struct {
	bw  *bufio.Writer
	buf []byte
}

func (s *jsonlSink) writePage(page int, items rows) error {
	for i, it := range items.All() {
		if err := s.line(page, i, 0, it, items.Compact(i)); err != nil {
			return err
		}
	}
	return nil
}

// line writes item i of a page as one line, after lead unless it is 0: a
// compact item as it is, any other through appendCompact.
func (s *jsonlSink) line(page, i int, lead byte, it json.RawMessage, compact bool) error {
	if lead != 0 {
		_ = s.bw.WriteByte(lead) // a failure sticks: the last write returns it
	}
	if compact {
		_, _ = s.bw.Write(it)
		return s.bw.WriteByte('\n')
	}
	var err error
	if s.buf, err = appendCompact(s.buf[:0], it); err != nil {
		return fmt.Errorf("item %d of page %d is not valid JSON: %w", i+1, page, err)
	}
	s.buf = append(s.buf, '\n')
	_, err = s.bw.Write(s.buf)
	return err
}

// appendCompact appends item to dst without the white space outside its
// strings, as json.Compact does. Items come from a walk, which validated
// their page (RFC 8259, as encoding/json applies it), so a scan that knows
// only where strings begin and end is exact, at a fraction of json.Compact's
// cost (it was a fifth of a harvest's CPU). A control character inside a
// string, which no valid item has, is refused, so that a line can never
// break.
func appendCompact(dst, item []byte) ([]byte, error) {
	start, i, n := 0, 0, len(item)
	for i < n {
		for i < n && !valueStop[item[i]] {
			i++
		}
		if i >= n {
			break
		}
		switch c := item[i]; {
		case c == '"':
			i++
			for i < n && !stringStop[item[i]] {
				i++
			}
			for i < n && item[i] != '"' {
				switch c := item[i]; {
				case c == '\\':
					// An escape takes the next byte as it is, so a control
					// byte there would pass into the line unseen.
					if i+1 < n && item[i+1] < 0x20 {
						return dst, fmt.Errorf("control character %#x in a string at byte %d", item[i+1], i+1)
					}
					i += 2
				case c < 0x20:
					return dst, fmt.Errorf("control character %#x in a string at byte %d", c, i)
				default:
					i++
				}
				for i < n && !stringStop[item[i]] {
					i++
				}
			}
			if i >= n {
				return dst, errors.New("unterminated string")
			}
			i++
		default: // white space
			dst = append(dst, item[start:i]...)
			i++
			start = i
		}
	}
	return append(dst, item[start:]...), nil
}

// valueStop marks the bytes outside strings that the scan acts on: a
// string's opening quote, white space.
var valueStop = [256]bool{'"': true, ' ': true, '\t': true, '\n': true, '\r': true}

// stringStop marks the bytes that end a run of plain string content: the
// closing quote, an escape, a control character.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func (s *jsonlSink) buffered() (int, error) { return s.bw.Buffered(), nil }
func (s *jsonlSink) flush() error           { return s.bw.Flush() }
func (s *jsonlSink) columns() []string      { return nil }
func (s *jsonlSink) end() error             { return s.flush() }

// extraColumn holds, as a JSON object, the fields of an item that the header
// does not name: the header is the union of the keys of the first page, and
// a field first seen later is kept rather than dropped. A file gets the
// column only once a row needs it (ADR 0326); a stream, which cannot be
// rewritten, always has it.
const extraColumn = "_extra"

// csvSink writes items that are JSON objects as CSV rows. Strings are
// written as they are, null as an empty cell, other values as their JSON
// text.
type csvSink struct {
	raw   bool // --csv-raw: cells exactly as the server sent them
	bw    *bufio.Writer
	w     *csv.Writer
	cols  []string
	index map[string]int
	row   []string
	// flatten writes nested objects as dotted columns.
	flatten bool
	// partial is the file being written, "" for a stream. wide says the
	// header written has _extra; extra that a row has needed it since.
	partial     string
	wide, extra bool
}

func (s *csvSink) setColumns(cols []string, writeHeader bool) error {
	if !writeHeader && s.partial != "" && len(cols) > 0 && cols[len(cols)-1] == extraColumn {
		// A resumed file whose rows needed _extra: columns() marks it so.
		cols = cols[:len(cols)-1]
		s.extra = len(cols) > 0
	}
	s.cols = cols
	if s.cols == nil {
		s.cols = []string{}
	}
	// No columns at all would be a blank header line, which CSV readers
	// skip: such a file has _extra from the start, as a stream has.
	s.wide = s.partial == "" || len(s.cols) == 0
	s.index = make(map[string]int, len(cols))
	for i, c := range cols {
		s.index[c] = i
	}
	s.row = make([]string, len(cols)+1)
	if writeHeader {
		h := make([]string, 0, len(cols)+1)
		for _, c := range cols {
			h = append(h, s.safe(c))
		}
		if s.wide {
			h = append(h, extraColumn)
		}
		return s.w.Write(h)
	}
	return nil
}

func (s *csvSink) writePage(page int, items rows) error {
	parsed := make([][]field, items.Len())
	for i, it := range items.All() {
		f, err := objectFields(it)
		if err != nil {
			return fmt.Errorf("item %d of page %d: %w; CSV output needs JSON objects (use a .jsonl output)", i+1, page, err)
		}
		if s.flatten {
			if f, err = flattened("", f); err != nil {
				return fmt.Errorf("item %d of page %d: %w", i+1, page, err)
			}
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
			s.row[i] = s.cell(f.raw)
		}
		row := s.row
		if extra != nil {
			b, err := json.Marshal(extra)
			if err != nil {
				return err
			}
			s.row[len(s.cols)] = string(b)
			s.extra = true
		} else if !s.wide {
			row = s.row[:len(s.cols)]
		}
		if err := writeRow(s.w, s.bw, row); err != nil {
			return err
		}
	}
	return nil
}

// writeRow writes one CSV row. A row of one empty cell would be a blank
// line, which CSV readers skip: it is written quoted, so that it stays a
// row.
func writeRow(w *csv.Writer, bw *bufio.Writer, row []string) error {
	if len(row) == 1 && row[0] == "" {
		w.Flush()
		_, err := bw.WriteString("\"\"\n")
		return err
	}
	return w.Write(row)
}

func (s *csvSink) buffered() (int, error) {
	s.w.Flush() // into bw: the csv.Writer keeps a buffer of its own
	return s.bw.Buffered(), s.w.Error()
}

func (s *csvSink) flush() error {
	s.w.Flush()
	if err := s.w.Error(); err != nil {
		return err
	}
	return s.bw.Flush()
}

// columns is what a resume needs to continue the file: the header's
// columns, and _extra after them once a row of a file has needed it.
func (s *csvSink) columns() []string {
	if s.extra && !s.wide && s.partial != "" {
		return append(append([]string(nil), s.cols...), extraColumn)
	}
	return s.cols
}

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

// cell is a field's value as a cell: a string decoded and made safe, null
// empty, anything else its compact JSON text (which holds no control
// character and cannot start a formula but for a negative number's sign).
func (s *csvSink) cell(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	switch {
	case t == "null":
		return ""
	case strings.HasPrefix(t, `"`):
		var v string
		if json.Unmarshal(raw, &v) == nil {
			return s.safe(v)
		}
	case strings.HasPrefix(t, "{"), strings.HasPrefix(t, "["):
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			return b.String()
		}
	}
	return t
}

// safe is text from the server as a CSV cell (ADR 309): control and format
// characters escaped, except the line feeds and tabs CSV quotes, and text
// a spreadsheet would run as a formula (a leading =, +, -, @, tab or CR)
// preceded by ', so that it shows as text. --csv-raw keeps the text as sent.
func (s *csvSink) safe(v string) string {
	if s.raw || v == "" {
		return v
	}
	lines := strings.Split(v, "\n")
	for i, line := range lines {
		parts := strings.Split(line, "\t")
		for j := range parts {
			parts[j] = credentials.Escape(parts[j])
		}
		lines[i] = strings.Join(parts, "\t")
	}
	out := strings.Join(lines, "\n")
	if strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		out = "'" + out
	}
	return out
}

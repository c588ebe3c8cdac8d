package main

import (
	"bufio"
	"encoding/csv"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// The output formats. A harvest's state records the format, so a resume
// writes the same one; flattened CSV is a format of its own for that reason.
const (
	fmtJSONL   = "jsonl"
	fmtJSON    = "json"
	fmtGzip    = "jsonl.gz"
	fmtZstd    = "jsonl.zst"
	fmtCSV     = "csv"
	fmtCSVFlat = "csv-flatten"
)

// formatNames are the --format values, and extensions the -o endings that
// pick a format, longest first.
var (
	formatNames = []string{fmtJSONL, fmtJSON, fmtGzip, fmtZstd, fmtCSV, fmtParquet}
	extensions  = []struct{ ext, format string }{
		{".jsonl.gz", fmtGzip}, {".ndjson.gz", fmtGzip},
		{".jsonl.zst", fmtZstd}, {".ndjson.zst", fmtZstd},
		{".jsonl", fmtJSONL}, {".ndjson", fmtJSONL},
		{".json", fmtJSON}, {".csv", fmtCSV}, {".parquet", fmtParquet},
	}
)

// formatOf picks the output format from --format or the file's extension,
// and --flatten, which only CSV takes.
func formatOf(out, format string, flatten bool) (string, error) {
	name := format
	switch {
	case format != "":
		found := false
		for _, f := range formatNames {
			found = found || f == format
		}
		if !found {
			return "", usagef("--format %q: want %s", format, strings.Join(formatNames, ", "))
		}
	case out == "" || out == "-":
		name = fmtJSONL
	default:
		lower := strings.ToLower(out)
		for _, e := range extensions {
			if strings.HasSuffix(lower, e.ext) {
				name = e.format
				break
			}
		}
		if name == "" && !strings.Contains(lower[strings.LastIndex(lower, "/")+1:], ".") {
			name = fmtJSONL // a name without an extension, such as /dev/stdout
		}
		if name == "" {
			return "", usagef("cannot tell the format of %s from its extension (.jsonl, .json, .jsonl.gz, .jsonl.zst, .csv, .parquet); use --format", out)
		}
	}
	if flatten {
		if name != fmtCSV {
			return "", usagef("--flatten is for CSV output, not %s", name)
		}
		name = fmtCSVFlat
	}
	return name, nil
}

// newOutput returns the sink of a harvest's format, continuing the output
// that st describes. stream says the output cannot be rewritten when it is
// published (standard output, a FIFO); partial names the file otherwise.
func newOutput(format string, w io.Writer, st *harvestState, partial string) sink {
	switch format {
	case fmtJSON:
		return &arraySink{jsonlSink: jsonlSink{bw: bufio.NewWriterSize(w, 64<<10)}, rows: st.Rows}
	case fmtGzip:
		return newCompressed(w, func() compressor { return gzip.NewWriter(nil) })
	case fmtZstd:
		return newCompressed(w, func() compressor {
			// One goroutine at most, and none once a frame is closed.
			z, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1)) // options are constants: no error
			return z
		})
	case fmtParquet:
		return &parquetSink{jsonlSink: jsonlSink{bw: bufio.NewWriterSize(w, 64<<10)}, partial: partial}
	case fmtCSV, fmtCSVFlat:
		bw := bufio.NewWriterSize(w, 64<<10)
		s := &csvSink{bw: bw, w: csv.NewWriter(bw), flatten: format == fmtCSVFlat, partial: partial}
		if st.Columns != nil {
			_ = s.setColumns(st.Columns, false) // no header to write, nothing to fail
		}
		return s
	}
	return &jsonlSink{bw: bufio.NewWriterSize(w, 64<<10)}
}

// arraySink writes one JSON array: "[" before the first item, "," before
// each other, each item on a line of its own, and "]" only at the end.
// A partial file is the array without its closing bracket, cut after an
// item, so a resume continues it as it continues JSONL.
type arraySink struct {
	jsonlSink
	rows int64 // items written so far, the resumed ones included
}

func (s *arraySink) writePage(page int, items rows) error {
	for i, it := range items.All() {
		lead := byte(',')
		if s.rows == 0 {
			lead = '['
		}
		if err := s.line(page, i, lead, it, items.Compact(i)); err != nil {
			return err
		}
		s.rows++
	}
	return nil
}

func (s *arraySink) end() error {
	tail := "]\n"
	if s.rows == 0 {
		tail = "[]\n"
	}
	if _, err := s.bw.WriteString(tail); err != nil {
		return err
	}
	return s.bw.Flush()
}

// A compressor is a gzip or zstd stream writer: Close ends a member (a
// frame), Reset starts the next one.
type compressor interface {
	io.WriteCloser
	Reset(io.Writer)
}

// compressedSink writes JSONL through a compressor. Every point the
// checkpoint can record ends a member, so the file is always whole members
// up to the recorded offset; a resume cuts it there and appends members,
// which gzip and zstd readers read as one stream.
type compressedSink struct {
	jsonlSink               // its writer is the current member
	file      *bufio.Writer // below the compressor
	members   *memberWriter // opens a member on the first byte after one ends
}

type memberWriter struct {
	dst  io.Writer
	z    compressor
	open bool
}

func (m *memberWriter) Write(p []byte) (int, error) {
	if !m.open {
		m.z.Reset(m.dst)
		m.open = true
	}
	return m.z.Write(p)
}

func (m *memberWriter) end() error {
	if !m.open {
		return nil
	}
	m.open = false
	return m.z.Close()
}

func newCompressed(w io.Writer, z func() compressor) *compressedSink {
	file := bufio.NewWriterSize(w, 64<<10)
	m := &memberWriter{dst: file, z: z()}
	return &compressedSink{jsonlSink: jsonlSink{bw: bufio.NewWriterSize(m, 64<<10)}, file: file, members: m}
}

// endMember moves everything written into the file's buffer as whole
// members.
func (s *compressedSink) endMember() error {
	if err := s.bw.Flush(); err != nil {
		return err
	}
	return s.members.end()
}

func (s *compressedSink) buffered() (int, error) {
	if err := s.endMember(); err != nil {
		return 0, err
	}
	return s.file.Buffered(), nil
}

func (s *compressedSink) flush() error {
	if err := s.endMember(); err != nil {
		return err
	}
	return s.file.Flush()
}

func (s *compressedSink) end() error { return s.flush() }

// output is the sink of a harvest, continuing the output st describes.
func (j *job) output(w io.Writer, st *harvestState) sink {
	s := newOutput(j.format, w, st, j.partial())
	if isXMLStyle(j.next) {
		return &xmlSink{sink: s}
	}
	return s
}

// partial is the file a harvest writes into, "" for a stream.
func (j *job) partial() string {
	if j.out == "" {
		return ""
	}
	return partialPath(j.out)
}

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/steadyhttp/steady/steadytest"
)

// decompressed reads every member (frame) of a gzip or zstd file.
func decompressed(format string, b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	switch format {
	case fmtGzip:
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(r)
	case fmtZstd:
		r, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return io.ReadAll(r)
	}
	return b, nil
}

// outputIDs decodes a published output whole, by its format, and returns
// the id of every row.
func outputIDs(t *testing.T, path, format string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = decompressed(format, b); err != nil {
		t.Fatalf("%s does not decompress: %v", path, err)
	}
	var rows []struct{ ID int }
	switch format {
	case fmtJSON:
		if err := json.Unmarshal(b, &rows); err != nil {
			t.Fatalf("%s is not one JSON array: %v\n%.200s", path, err, b)
		}
	case fmtCSV:
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll() // every row as wide as the header
		if err != nil || len(recs) == 0 || recs[0][0] != "id" {
			t.Fatalf("%s is not CSV with an id column: %v", path, err)
		}
		for _, r := range recs[1:] {
			id, err := strconv.Atoi(r[0])
			if err != nil {
				t.Fatalf("row %q", r)
			}
			rows = append(rows, struct{ ID int }{id})
		}
	default:
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var r struct{ ID int }
			if err := dec.Decode(&r); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			rows = append(rows, r)
		}
		if len(b) > 0 && (b[len(b)-1] != '\n' || bytes.Count(b, []byte("\n")) != len(rows)) {
			t.Fatalf("%s is not one row a line", path)
		}
	}
	ids := make([]int, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

var outputExts = []struct{ ext, format string }{
	{".json", fmtJSON}, {".jsonl.gz", fmtGzip}, {".jsonl.zst", fmtZstd}, {".csv", fmtCSV}, {".jsonl", fmtJSONL},
}

// Every output, harvested whole through cut connections, decodes to every
// row once.
func TestHarvestOutputFormats(t *testing.T) {
	for _, o := range outputExts {
		t.Run(o.format, func(t *testing.T) {
			srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1234, Faults: steadytest.Mild(5)})
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "rows"+o.ext)
			if code, _, errText := cli(t, "harvest", "-q", srv.URL+"/items?limit=100", "-o", out); code != exitOK {
				t.Fatalf("exit %d: %s", code, errText)
			}
			checkExact(t, outputIDs(t, out, o.format), 1234)
		})
	}
}

// An interrupted harvest resumed into each output: the published file
// decodes to every row once. A compressed file is continued with new
// members after the recorded point, never cut inside one.
func TestHarvestOutputFormatsResume(t *testing.T) {
	for _, o := range outputExts {
		t.Run(o.format, func(t *testing.T) {
			srv := newPageServer(t, objects(1, 3), objects(4, 6), objects(7, 9), objects(10, 12))
			srv.fail[3] = http.StatusServiceUnavailable
			out := filepath.Join(t.TempDir(), "rows"+o.ext)
			if code, _, errText := cli(t, "harvest", "-q", "--retries", "0", srv.URL, "-o", out); code != exitInterrupted {
				t.Fatalf("interrupted: %d %q", code, errText)
			}
			// A kill after a write the state does not count: bytes past
			// the recorded offset, which the resume must cut off.
			f, err := os.OpenFile(partialPath(out), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("garbage past the offset")
			f.Close()
			srv.mu.Lock()
			delete(srv.fail, 3)
			srv.mu.Unlock()
			if code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out, "--resume"); code != exitOK {
				t.Fatalf("resume: %d %q", code, errText)
			}
			checkExact(t, outputIDs(t, out, o.format), 12)
			if o.format == fmtGzip {
				if n := gzipMembers(t, out); n < 2 {
					t.Errorf("%d gzip members; a resume appends at least one", n)
				}
			}
		})
	}
}

func gzipMembers(t *testing.T, path string) int {
	t.Helper()
	b, _ := os.ReadFile(path)
	br := bufio.NewReader(bytes.NewReader(b))
	r, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		r.Multistream(false)
		if _, err := io.Copy(io.Discard, r); err != nil {
			t.Fatal(err)
		}
		n++
		if err := r.Reset(br); errors.Is(err, io.EOF) {
			return n
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

var styleRuns = []struct {
	name  string
	style steadytest.Style
	query string
	pages string
}{
	{"offset", steadytest.Offset, "?_limit=100", "offset:_start:_limit"},
	{"page-limit", steadytest.PageLimit, "?_page=1&_limit=100", "page:_page:_limit"},
	{"per-page", steadytest.PerPage, "?_page=1&_per_page=100", "page:_page:_per_page"},
	{"range", steadytest.Range, "", "range:100"},
	{"s3", steadytest.S3, "?list-type=2&max-keys=100", "xml:ListBucketResult/NextContinuationToken:continuation-token"},
}

// Every style --pages spells walks every row once through Harsh faults,
// the computed ones four pages at a time.
func TestHarvestPagingStyles(t *testing.T) {
	for _, c := range styleRuns {
		t.Run(c.name, func(t *testing.T) {
			srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1234, Style: c.style, Faults: steadytest.Harsh(7)})
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			args := []string{"harvest", "-q", "--concurrent", "4", "--retries", "20", srv.URL + steadytest.ItemsPath + c.query, "-o", out, "--pages", c.pages}
			if code, _, errText := cli(t, args...); code != exitOK {
				t.Fatalf("exit %d: %s", code, errText)
			}
			if c.style == steadytest.S3 {
				checkExact(t, s3IDs(t, out), 1234)
				return
			}
			checkExact(t, rowsOf(t, out), 1234)
		})
	}
}

// s3IDs reads the ids out of the Key of every S3 listing row.
func s3IDs(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var row struct{ Key, Size, StorageClass string }
		if err := json.Unmarshal([]byte(line), &row); err != nil || row.StorageClass != "STANDARD" {
			t.Fatalf("line %q: %v", line, err)
		}
		for id := range 1 << 20 {
			if steadytest.S3Key(id) == row.Key {
				ids = append(ids, id)
				break
			}
		}
	}
	return ids
}

func TestHarvestPagesGarbage(t *testing.T) {
	for _, p := range []string{"offset", "range:x", "xml:a", "page:api_key", "nope", "cursor:a"} {
		code, _, errText := cli(t, "harvest", "http://127.0.0.1:1/items", "--pages", p)
		if code != exitUsage || !strings.Contains(errText, "--pages") {
			t.Errorf("--pages %q: exit %d %q; want 2", p, code, errText)
		}
	}
	if code, _, errText := cli(t, "harvest", "http://127.0.0.1:1/items", "-o", "x.jsonl", "--flatten"); code != exitUsage {
		t.Errorf("--flatten on JSONL: exit %d %q; want 2", code, errText)
	}
}

// A CSV file gets _extra only once a row needs it: then the header names it
// and every row is as wide as the header, even across a resume.
func TestHarvestCSVExtraOnlyWhenNeeded(t *testing.T) {
	srv := newPageServer(t, objects(1, 2), `[{"id":3,"name":"n3","late":true}]`, objects(4, 5), objects(6, 7))
	srv.fail[3] = http.StatusServiceUnavailable
	out := filepath.Join(t.TempDir(), "rows.csv")
	if code, _, errText := cli(t, "harvest", "-q", "--retries", "0", srv.URL, "-o", out); code != exitInterrupted {
		t.Fatalf("interrupted: %d %q", code, errText)
	}
	srv.mu.Lock()
	delete(srv.fail, 3)
	srv.mu.Unlock()
	if code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out, "--resume"); code != exitOK {
		t.Fatalf("resume: %d %q", code, errText)
	}
	recs := readCSV(t, out)
	if got := strings.Join(recs[0], ","); got != "id,name,_extra" {
		t.Fatalf("header %q", got)
	}
	if got := strings.Join(recs[3], ","); got != `3,n3,{"late":true}` {
		t.Errorf("row 3: %q", got)
	}
	checkExact(t, outputIDs(t, out, fmtCSV), 7)
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// --flatten writes nested objects as dotted columns; a GeoJSON feature's
// properties become columns and its geometry one cell of JSON text.
func TestHarvestCSVFlatten(t *testing.T) {
	srv := newPageServer(t, `[{"id":1,"a":{"b":2,"c":{"d":"x"}},"list":[1,2],"e":{}}]`)
	out := filepath.Join(t.TempDir(), "rows.csv")
	if code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out, "--flatten", "--pages", "link"); code != exitOK {
		t.Fatalf("exit %d %q", code, errText)
	}
	recs := readCSV(t, out)
	if h, r := strings.Join(recs[0], "|"), strings.Join(recs[1], "|"); h != "id|a.b|a.c.d|list|e" || r != "1|2|x|[1,2]|{}" {
		t.Errorf("flattened: %q / %q", h, r)
	}

	geo := newPageServer(t, `{"type":"FeatureCollection","features":[{"type":"Feature","id":1,"properties":{"name":"a","tags":{"k":"v"}},"geometry":{"type":"Point","coordinates":[1.5,2]}}]}`)
	out = filepath.Join(t.TempDir(), "geo.csv")
	if code, _, errText := cli(t, "harvest", "-q", geo.URL, "-o", out, "--flatten", "--pages", "link"); code != exitOK {
		t.Fatalf("exit %d %q", code, errText)
	}
	recs = readCSV(t, out)
	if h, r := strings.Join(recs[0], "|"), strings.Join(recs[1], "|"); h != "type|id|properties.name|properties.tags.k|geometry" ||
		r != `Feature|1|a|v|{"type":"Point","coordinates":[1.5,2]}` {
		t.Errorf("GeoJSON flattened: %q / %q", h, r)
	}
}

// The built binary writes each output whole, and a harvest killed midway
// and resumed decodes to every row once.
func TestBinaryOutputFormats(t *testing.T) {
	bin := binary(t)
	for _, o := range outputExts[:3] {
		t.Run(o.format, func(t *testing.T) {
			srv := newPageServer(t, objects(1, 3), objects(4, 6), objects(7, 9))
			srv.mu.Lock()
			srv.fail[2] = http.StatusServiceUnavailable
			srv.mu.Unlock()
			out := filepath.Join(t.TempDir(), "rows"+o.ext)
			cmd := exec.Command(bin, "harvest", "-q", "--retries", "0", srv.URL, "-o", out)
			if err := cmd.Run(); cmd.ProcessState.ExitCode() != exitInterrupted {
				t.Fatalf("interrupted: %v", err)
			}
			srv.mu.Lock()
			delete(srv.fail, 2)
			srv.mu.Unlock()
			if b, err := exec.Command(bin, "harvest", "-q", srv.URL, "-o", out, "--resume").CombinedOutput(); err != nil {
				t.Fatalf("resume: %v %s", err, b)
			}
			checkExact(t, outputIDs(t, out, o.format), 9)
		})
	}
}

// --pages auto proves each JSON style from its first page and walks every
// row once through Harsh faults, saying the flags it settled on.
func TestHarvestAutoDetectsStyles(t *testing.T) {
	for _, c := range styleRuns[:4] {
		t.Run(c.name, func(t *testing.T) {
			srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1234, Style: c.style, Faults: steadytest.Harsh(11)})
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			code, _, errText := cli(t, "harvest", "--retries", "20", srv.URL+steadytest.ItemsPath+c.query, "-o", out)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errText)
			}
			if strings.Count(errText, "detected: pages by --pages ") != 1 {
				t.Errorf("stderr %q; want one line of the explicit flags", errText)
			}
			checkExact(t, rowsOf(t, out), 1234)
		})
	}
}

// A first page that proves neither a style nor that it is the only one
// fails the harvest (exit 1) rather than publishing it as the whole.
func TestHarvestAutoUndetectedFails(t *testing.T) {
	srv := newPageServer(t, objects(1, 3))
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, errText := cli(t, "harvest", "-q", srv.URL, "-o", out)
	if code != exitFailed || !strings.Contains(errText, "--pages auto") || !strings.Contains(errText, "only page") {
		t.Fatalf("exit %d %q; want 1 saying auto could not tell", code, errText)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was published", out)
	}
}

// Harvests of each style, explicit and auto, stopped by a failure that no
// retry hides and resumed until complete, hold every row once; a Range
// walk resumes exact though its pages share one URL.
func TestHarvestPagingStylesResume(t *testing.T) {
	for _, c := range styleRuns {
		for _, pages := range []string{c.pages, "auto"} {
			t.Run(c.name+"/"+pages, func(t *testing.T) {
				srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1234, Style: c.style, Faults: steadytest.Harsh(13)})
				defer srv.Close()
				out := filepath.Join(t.TempDir(), "rows.jsonl")
				args := []string{"harvest", "-q", "--retries", "0", "--concurrent", "3", srv.URL + steadytest.ItemsPath + c.query, "-o", out, "--pages", pages}
				code, _, errText := cli(t, args...)
				resumes := 0
				for ; resumes < 200; resumes++ {
					if code != exitInterrupted && code != exitRateLimited {
						break
					}
					// Resumes retry, so that they get further than the
					// first run, which a Range resume walks again.
					code, _, errText = cli(t, append(append(args, "--resume"), "--retries", "20")...)
				}
				if code != exitOK {
					t.Fatalf("exit %d: %s", code, errText)
				}
				if resumes == 0 {
					t.Logf("no run was interrupted: the faults spared every page")
				}
				if c.style == steadytest.S3 {
					checkExact(t, s3IDs(t, out), 1234)
					return
				}
				checkExact(t, rowsOf(t, out), 1234)
			})
		}
	}
}

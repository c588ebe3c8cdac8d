package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A continuation across runs is checked as strictly as one within a run:
// each server below lies about the rest of a 1000-byte body whose first
// 500 bytes an earlier run left in FILE.partial. None may be committed.
func TestGetAcrossRunsRefusesLyingContinuations(t *testing.T) {
	body := bytes.Repeat([]byte("abcdefghij"), 100)
	changed := append(bytes.Clone(body[:490]), bytes.Repeat([]byte("Z"), 510)...)
	changed[499] = body[499] // the one byte a 1-byte seam compares
	const lm = "Mon, 02 Jan 2006 15:04:05 GMT"
	// rest answers the Range request with body[from:] as a 206.
	rest := func(w http.ResponseWriter, r *http.Request, b []byte, total int, send int) {
		from, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.Header.Get("Range"), "bytes="), "-"))
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, total-1, total))
		w.WriteHeader(http.StatusPartialContent)
		out := b[from:]
		if send >= 0 {
			out = bytes.Repeat([]byte("x"), send)
		}
		w.Write(out)
	}
	cases := []struct {
		name   string
		rec    partialRecord
		serve  func(w http.ResponseWriter, r *http.Request)
		want   string
		status int
	}{
		{"seam of 16 bytes", partialRecord{ETag: `"v1"`, Length: 1000}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Etag", `"v1"`)
			rest(w, r, changed, 1000, -1)
		}, "last 16 bytes differ", exitFailed},
		{"Last-Modified compared", partialRecord{LastModified: lm, Length: 1000}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Last-Modified", "Tue, 03 Jan 2006 15:04:05 GMT") // If-Range ignored: a newer body
			rest(w, r, body, 1000, -1)
		}, "Last-Modified", exitFailed},
		{"ETag dropped", partialRecord{ETag: `"v1"`, Length: 1000}, func(w http.ResponseWriter, r *http.Request) {
			rest(w, r, body, 1000, -1)
		}, "without the ETag", exitFailed},
		{"body past its range, no first length", partialRecord{ETag: `"v1"`, Length: -1}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Etag", `"v1"`)
			w.Header().Set("Transfer-Encoding", "chunked")
			from, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.Header.Get("Range"), "bytes="), "-"))
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-999/1000", from))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(body[from:])
			w.Write(bytes.Repeat([]byte("+"), 300))
		}, "more than the 1000 bytes", exitFailed},
		{"body short of its range, no first length", partialRecord{ETag: `"v1"`, Length: -1}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Etag", `"v1"`)
			w.Header().Set("Transfer-Encoding", "chunked")
			from, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.Header.Get("Range"), "bytes="), "-"))
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-999/1000", from))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(body[from : from+100]) // then the answer ends
		}, "ended at byte", exitInterrupted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Range") == "" {
					t.Errorf("a request without Range: %v", r.Header)
				}
				c.serve(w, r)
			}))
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "dump.bin")
			rec := c.rec
			rec.Version, rec.URL = partialVersion, srv.URL+"/dump"
			data, _ := json.Marshal(rec)
			if err := os.WriteFile(partialPath(out), body[:500], 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(recordPath(out), data, 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, errText := cli(t, "get", "-q", "--retries", "1", srv.URL+"/dump", "-o", out)
			if code != c.status || !strings.Contains(errText, c.want) {
				t.Errorf("exit %d, %q; want %d saying %q", code, errText, c.status, c.want)
			}
			if _, err := os.Lstat(out); err == nil {
				t.Error("the output was published")
			}
			if b, _ := os.ReadFile(partialPath(out)); !bytes.Equal(b, body[:len(b)]) {
				t.Errorf("the partial (%d bytes) is no longer a prefix of the body", len(b))
			}
		})
	}
}

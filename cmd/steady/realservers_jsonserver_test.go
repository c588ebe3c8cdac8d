package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// jsonServerRows is the collection every json-server test serves: a
// multiple of the page size, so that each walk meets the request past the
// last page (an empty page from 0.17, the last page again from 1.x).
const jsonServerRows = 3000

// jsonServerRow is row id of the seeded collection.
type jsonServerRow struct {
	ID   int               `json:"id"`
	Name string            `json:"name"`
	N    int               `json:"n"`
	Tags []string          `json:"tags"`
	Meta map[string]string `json:"meta"`
}

func seedRow(id int) jsonServerRow {
	return jsonServerRow{ID: id, Name: fmt.Sprintf("row %d: ünïcödé, \"quoted\", a\\b", id), N: id * 7919 % 1000,
		Tags: []string{"t" + strconv.Itoa(id%7), "u" + strconv.Itoa(id%11)}, Meta: map[string]string{"k": strconv.Itoa(id)}}
}

// startJSONServer writes a db.json of jsonServerRows rows and starts the
// json-server that testdata/jsonserver installs as pkg (json-server-0 for
// 0.17, json-server-1 for 1.x) on 127.0.0.1; it returns host:port.
func startJSONServer(t *testing.T, pkg string) string {
	t.Helper()
	node := findProgram(t, "STEADY_NODE", "node", "apt-get install nodejs npm")
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "jsonserver", "node_modules", pkg))
	if err != nil {
		t.Fatal(err)
	}
	bin := map[string]string{"json-server-0": "lib/cli/bin.js", "json-server-1": "lib/bin.js"}[pkg]
	if _, err := os.Stat(filepath.Join(root, bin)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed: %v; .ci/deps/jsonserver runs npm ci", pkg, err)
		}
		t.Skipf("%s is not installed (npm ci --prefix testdata/jsonserver); skipping outside CI", pkg)
	}
	rows := make([]jsonServerRow, jsonServerRows)
	for i := range rows {
		rows[i] = seedRow(i + 1)
	}
	db, err := json.Marshal(map[string]any{"rows": rows})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "db.json"), db, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	host, port, _ := splitAddr(t, addr)
	args := []string{filepath.Join(root, bin), "-p", port}
	if pkg == "json-server-0" {
		args = append(args, "-H", host, "--quiet", "--read-only", "db.json")
	} else {
		args = append(args, "-h", host, "db.json")
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	startChild(t, pkg, cmd, answers("http://"+addr+"/rows?_limit=1", 200))
	return addr
}

// checkJSONServerRows fails unless out holds every seeded row once, in
// order, each with its seeded fields.
func checkJSONServerRows(t *testing.T, out []byte) {
	t.Helper()
	checkOnce(t, "uncut run", jsonlIDs(t, out, "id"), seqIDs(1, jsonServerRows), true)
	for i, line := range splitLines(out) {
		var got struct {
			Name string            `json:"name"`
			N    int               `json:"n"`
			Tags []string          `json:"tags"`
			Meta map[string]string `json:"meta"`
		}
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatal(err)
		}
		want := seedRow(i + 1)
		if got.Name != want.Name || got.N != want.N || fmt.Sprint(got.Tags) != fmt.Sprint(want.Tags) || got.Meta["k"] != want.Meta["k"] {
			t.Fatalf("row %d is %s, want the seeded %+v", i+1, line, want)
		}
	}
}

// json-server 0.17 pages by _start/_limit with X-Total-Count and no link,
// which auto must prove as offset paging.
func TestRealJSONServer017Offset(t *testing.T) {
	t.Parallel() // each waits mostly on backoffs after cuts
	addr := startJSONServer(t, "json-server-0")
	c := newCutter(t, addr)
	harvestCut(t, c, "http://"+c.addr+"/rows?_start=0&_limit=100", []string{"--pages", "offset:_start:_limit", "--items", ""},
		func(out []byte) { checkJSONServerRows(t, out) })
}

// json-server 0.17 by _page/_limit: auto follows its Link header, the
// explicit style computes the pages; both must write the same file.
func TestRealJSONServer017Page(t *testing.T) {
	t.Parallel() // each waits mostly on backoffs after cuts
	addr := startJSONServer(t, "json-server-0")
	c := newCutter(t, addr)
	harvestCut(t, c, "http://"+c.addr+"/rows?_page=1&_limit=100", []string{"--pages", "page:_page:_limit", "--items", ""},
		func(out []byte) { checkJSONServerRows(t, out) })
}

// json-server 1.x by _page/_per_page: the page count and total are in the
// body beside data, and a page past the last answers the last again.
func TestRealJSONServer1PerPage(t *testing.T) {
	t.Parallel() // each waits mostly on backoffs after cuts
	addr := startJSONServer(t, "json-server-1")
	c := newCutter(t, addr)
	harvestCut(t, c, "http://"+c.addr+"/rows?_page=1&_per_page=100", []string{"--pages", "page:_page:_per_page", "--items", "data"},
		func(out []byte) { checkJSONServerRows(t, out) })
}

package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/steadyhttp/steady/steadytest"
)

// parquetRows reads a Parquet file whole: its columns by name with their
// physical types, and every row as column name to value (absent: null).
func parquetRows(t *testing.T, path string) (map[string]string, []map[string]parquet.Value) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatalf("%s is not a Parquet file: %v", path, err)
	}
	types := map[string]string{}
	names := map[int]string{}
	for i, path := range pf.Schema().Columns() {
		leaf, _ := pf.Schema().Lookup(path...)
		types[path[0]] = leaf.Node.Type().String()
		names[i] = path[0]
	}
	r := parquet.NewReader(f, pf.Schema())
	defer r.Close()
	var rows []map[string]parquet.Value
	buf := make([]parquet.Row, 100)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			m := map[string]parquet.Value{}
			for _, v := range row {
				if !v.IsNull() {
					m[names[v.Column()]] = v.Clone()
				}
			}
			rows = append(rows, m)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if int64(len(rows)) != pf.NumRows() {
		t.Fatalf("%d rows read, %d in the footer", len(rows), pf.NumRows())
	}
	return types, rows
}

// A harvest into .parquet through cut connections: every row once, in
// order, each field in a column of its type; the value column, whose
// numbers are sometimes whole, is widened to a double.
func TestHarvestParquet(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 2500, Faults: steadytest.Harsh(3)})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.parquet")
	if code, _, errText := cli(t, "harvest", "-q", "--retries", "20", srv.URL+"/items?limit=100", "-o", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	types, rows := parquetRows(t, out)
	if len(rows) != 2500 {
		t.Fatalf("%d rows", len(rows))
	}
	if types["id"] != "INT(64,true)" || types["value"] != "DOUBLE" || types["name"] != "STRING" {
		t.Errorf("column types %v", types)
	}
	for i, r := range rows {
		want := steadytest.RowFor(i + 1)
		if r["id"].Int64() != int64(want.ID) || r["name"].String() != want.Name || r["value"].Double() != want.Value {
			t.Fatalf("row %d: %v, want %+v", i, r, want)
		}
	}
	for _, leftover := range []string{partialPath(out), statePath(out), builtPath(partialPath(out))} {
		if _, err := os.Stat(leftover); err == nil {
			t.Errorf("%s was left", leftover)
		}
	}
}

// Rows that differ widen the schema rather than lose data: int with float
// is a double; a number with text, or any object or array, is a string of
// its JSON text; an integer past int64 is a string; a column first seen
// late, or null, is an optional column that the other rows do not have.
func TestParquetWidens(t *testing.T) {
	pages := []string{
		`[{"id":1,"n":1,"f":1,"s":true},{"id":2,"n":2.5,"f":2}]`,
		`[{"id":3,"n":"three","f":3,"late":{"a":[1, 2]}},{"id":4,"n":null,"f":99999999999999999999,"s":false}]`,
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := 0
		if r.URL.Query().Get("p") == "2" {
			i = 1
		} else {
			w.Header().Set("Link", "<"+srv.URL+`/x?p=2>; rel="next"`)
		}
		io.WriteString(w, pages[i])
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "w.parquet")
	if code, _, errText := cli(t, "harvest", "-q", "--pages", "link", srv.URL+"/x", "-o", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	types, rows := parquetRows(t, out)
	want := map[string]string{"id": "INT(64,true)", "n": "STRING", "f": "STRING", "s": "BOOLEAN", "late": "STRING"}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Errorf("types %v, want %v", types, want)
	}
	got := func(i int, col string) string {
		v, ok := rows[i][col]
		if !ok {
			return "null"
		}
		return v.String()
	}
	checks := [][3]string{
		{"0", "n", "1"}, {"1", "n", "2.5"}, {"2", "n", "three"}, {"3", "n", "null"},
		{"3", "f", "99999999999999999999"}, {"2", "late", `{"a":[1,2]}`}, {"0", "late", "null"},
		{"0", "s", "true"}, {"1", "s", "null"}, {"3", "s", "false"},
	}
	for _, c := range checks {
		i := int(c[0][0] - '0')
		if g := got(i, c[1]); g != c[2] {
			t.Errorf("row %d %s = %s, want %s", i, c[1], g, c[2])
		}
	}
}

func TestParquetUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--format", "parquet"},
		{"--format", "parquet", "-o", "-"},
	} {
		if code, _, errText := cli(t, append([]string{"harvest", "-q", "http://127.0.0.1:1/items"}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d, %s", args, code, errText)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `[1,2]`) }))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "n.parquet")
	if code, _, errText := cli(t, "harvest", "-q", "--pages", "link", srv.URL, "-o", out); code != exitFailed || !strings.Contains(errText, "JSON object") {
		t.Errorf("numbers as rows: exit %d, %s", code, errText)
	}
}

// kill -9 mid-harvest into .parquet, then --resume: the published file
// holds every row once, in order.
func TestBinaryParquetKillAndResume(t *testing.T) {
	bin := binary(t)
	srv := dripServer(3000)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.parquet")
	args := []string{"harvest", "-q", srv.URL + "/items?limit=100", "-o", out}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	awaitChild(t, cmd, "a state with rows", func() bool {
		st, _ := loadState(statePath(out))
		return st != nil && st.Rows >= 300
	})
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the killed harvest published its output")
	}
	code, _, errText := runBinary(t, nil, append(args, "--resume")...)
	if code != exitOK {
		t.Fatalf("resume: exit %d, %s", code, errText)
	}
	_, rows := parquetRows(t, out)
	if len(rows) != 3000 {
		t.Fatalf("%d rows, want 3000", len(rows))
	}
	for i, r := range rows {
		if r["id"].Int64() != int64(i+1) {
			t.Fatalf("row %d has id %d", i, r["id"].Int64())
		}
	}
}

// rowFields splits a staged row as objectFields does, escapes, nesting
// and white space included.
func TestRowFieldsAgreesWithObjectFields(t *testing.T) {
	for _, row := range []string{
		`{}`, `{"a":1}`, `{"a":"x,}\"y","b":[1,{"c":"]"}],"d":null}`,
		`{"k\u00e9y":{"x":{}},"e":"\\"}`, `{ "a" : 1 , "b":[ ] }`, `{"a":true,"a":false}`,
	} {
		want, err := objectFields([]byte(row))
		if err != nil {
			t.Fatal(err)
		}
		got, err := rowFields([]byte(row), nil)
		if err != nil {
			t.Fatalf("%s: %v", row, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d fields, want %d", row, len(got), len(want))
		}
		for i := range got {
			if got[i].key != want[i].key || strings.TrimSpace(string(got[i].raw)) != strings.TrimSpace(string(want[i].raw)) {
				t.Errorf("%s: field %d %q=%s, want %q=%s", row, i, got[i].key, got[i].raw, want[i].key, want[i].raw)
			}
		}
	}
	for _, bad := range []string{`[1]`, `{"a"}`, `{"a":1`, `"x"`} {
		if _, err := rowFields([]byte(bad), nil); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

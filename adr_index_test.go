package steady_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestADRIndexListsEveryRecordWithItsStatus: docs/adr/README.md has one row
// per record, in order, with the status the record itself states, and every
// record states one; an index that drifts from the records fails here.
func TestADRIndexListsEveryRecordWithItsStatus(t *testing.T) {
	dir := filepath.Join("docs", "adr")
	index, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\d{4}) \| \[.+\]\((\d{4}-[^)]+\.md)\) \| ([^|]+) \|$`)
	var listed []string
	status := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(index), -1) {
		listed = append(listed, m[2])
		status[m[2]] = strings.TrimSpace(m[3])
	}
	files, err := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9]-*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found %d records; the test is not reading docs/adr", len(files))
	}
	if len(listed) != len(files) {
		t.Errorf("the index lists %d records, docs/adr holds %d", len(listed), len(files))
	}
	statusLine := regexp.MustCompile(`(?m)^Status: (.+)$`)
	for i, f := range files {
		name := filepath.Base(f)
		if i < len(listed) && listed[i] != name {
			t.Fatalf("index row %d is %s, want %s (every record, in order)", i+1, listed[i], name)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := statusLine.FindSubmatch(b)
		if m == nil {
			t.Errorf("%s has no Status line", name)
			continue
		}
		own := strings.TrimSpace(string(m[1]))
		if !strings.HasPrefix(own, "accepted") && !strings.HasPrefix(own, "superseded by") && !strings.HasPrefix(own, "withdrawn") {
			t.Errorf("%s: status %q is none of accepted, superseded by N, withdrawn", name, own)
		}
		if got, ok := status[name]; ok && got != own {
			t.Errorf("the index says %s is %q; the record says %q", name, got, own)
		}
	}
}

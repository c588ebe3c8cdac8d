package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// BenchmarkBuildParquet builds the Parquet file of 100,000 staged test
// rows: the end of a Parquet harvest.
func BenchmarkBuildParquet(b *testing.B) {
	dir := b.TempDir()
	staged := filepath.Join(dir, "rows.jsonl")
	f, err := os.Create(staged)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for id := 1; id <= 100_000; id++ {
		r := steadytest.RowFor(id)
		fmt.Fprintf(w, `{"id":%d,"name":%q,"value":%v,"timestamp":%q}`+"\n", r.ID, r.Name, r.Value, r.Timestamp.Format("2006-01-02T15:04:05Z07:00"))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	for b.Loop() {
		if err := buildParquet(staged, filepath.Join(dir, "rows.parquet")); err != nil {
			b.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "rows.parquet"))
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCheckpoint measures what making a page durable costs: a 64 KB
// page appended to the partial file, then its state recorded as
// checkpoint.pageDone does (data fsync, state fsync, rename, directory
// fsync) after every page ("synced") and at its own pace ("batched", ADR
// 192), beside the unsynced write and rename of before. Run them in one go
// and compare medians:
//
//	bench/rounds.sh 6 ./cmd/steady Checkpoint
func BenchmarkCheckpoint(b *testing.B) {
	page := bytes.Repeat([]byte(`{"id":1,"name":"n","value":0.5}`+"\n"), 2048)
	durable := func(b *testing.B, every int) {
		f, st, path := benchFiles(b)
		out := &byteCounter{w: f}
		cp := newCheckpoint(f, path, out, newSink("jsonl", out, nil), st, time.Now())
		if every > 0 {
			cp.pages = every
		}
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			out.Write(page)
			if err := cp.pageDone(st, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
		if err := cp.wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("synced", func(b *testing.B) { durable(b, 1) })
	b.Run("batched", func(b *testing.B) { durable(b, 0) })
	b.Run("unsynced", func(b *testing.B) {
		f, st, path := benchFiles(b)
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			f.Write(page)
			st.Offset += int64(len(page))
			data, _ := json.MarshalIndent(st, "", "  ")
			tmp, _ := os.CreateTemp(filepath.Dir(path), ".state-*")
			tmp.Write(data)
			tmp.Close()
			if err := os.Rename(tmp.Name(), path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchFiles(b *testing.B) (*os.File, *harvestState, string) {
	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, "rows.jsonl.partial"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	st := &harvestState{Version: stateVersion, URL: "https://api.example.gov/items", Pages: "link", Format: "jsonl", Next: "https://api.example.gov/items?page=2"}
	return f, st, filepath.Join(dir, "rows.jsonl.state.json")
}

package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// A harvest that fetches one page at a time into a plain output asks for
// one P, and every other keeps the process's (ADR 0369), whichever flags
// lead there. Not parallel: it swaps setProcs, which every harvest of the
// process reads.
func TestHarvestProcs(t *testing.T) {
	var calls []int
	setProcs = func(n int) int { calls = append(calls, n); return 2 }
	t.Cleanup(func() { setProcs = nil })
	link := steadytest.NewServer(steadytest.ServerOptions{Rows: 30})
	defer link.Close()
	offset := steadytest.NewServer(steadytest.ServerOptions{Rows: 30, Style: steadytest.Offset})
	defer offset.Close()
	linked := link.URL + "/items?limit=10"
	offsetAt := offset.URL + "/items?_start=0&_limit=10"
	cases := []struct {
		name, url, out string
		flags          []string
		env            string // GOMAXPROCS
		want           []int
	}{
		{"jsonl", linked, "rows.jsonl", nil, "", []int{1}},
		{"json", linked, "rows.json", nil, "", []int{1}},
		{"csv", linked, "rows.csv", nil, "", []int{1}},
		{"flattened csv", linked, "rows.csv", []string{"--flatten"}, "", []int{1}},
		{"stdout", linked, "", nil, "", []int{1}},
		{"gzip", linked, "rows.jsonl.gz", nil, "", nil},
		{"zstd", linked, "rows.jsonl.zst", nil, "", nil},
		{"parquet", linked, "rows.parquet", nil, "", nil},
		{"GOMAXPROCS set", linked, "rows.jsonl", nil, "2", nil},
		{"offset, concurrent", offsetAt, "rows.jsonl", []string{"--pages", "offset:_start:_limit"}, "", nil},
		{"offset, one at a time", offsetAt, "rows.jsonl", []string{"--pages", "offset:_start:_limit", "--concurrent", "1"}, "", []int{1}},
		{"auto finding offsets", offsetAt, "rows.jsonl", nil, "", []int{1}}, // auto keeps to one page at a time
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls = nil
			if c.env != "" {
				t.Setenv("GOMAXPROCS", c.env)
			}
			args := append([]string{"harvest", "-q", c.url}, c.flags...)
			if c.out != "" {
				args = append(args, "-o", filepath.Join(t.TempDir(), c.out))
			}
			if code, _, stderr := cli(t, args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !slices.Equal(calls, c.want) {
				t.Errorf("GOMAXPROCS set to %v, want %v", calls, c.want)
			}
		})
	}
}

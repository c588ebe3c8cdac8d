//go:build measure

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The must-show of concurrent offset paging, measured on the built binary
// (not in the default suite: go test -tags measure -run Measure .): 100,000
// rows behind a 20 ms-latency server, sequential and --concurrent 8 in
// interleaved rounds; the medians are reported, the concurrent one must be
// at least 6x faster, and every row comes once, in order.
func TestMeasureConcurrentOffset(t *testing.T) {
	const rows = 100_000
	srv := slowOffsets(t, rows, 20*time.Millisecond)
	dir := t.TempDir()
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	times := map[string][]time.Duration{}
	for round := range rounds {
		for _, conc := range []string{"1", "8"} {
			out := filepath.Join(dir, "rows-"+conc+".jsonl")
			start := time.Now()
			code, _, errText := runBinary(t, nil, "harvest", "-q", "--force", "--concurrent", conc,
				"--pages", "offset:_start:_limit", srv.URL+"/items?_limit=100", "-o", out)
			d := time.Since(start)
			if code != exitOK {
				t.Fatalf("round %d, --concurrent %s: exit %d, %s", round, conc, code, errText)
			}
			checkExact(t, rowsOf(t, out), rows)
			times[conc] = append(times[conc], d)
			t.Logf("round %d --concurrent %s: %v", round+1, conc, d.Round(time.Millisecond))
		}
	}
	median := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	seq, conc := median(times["1"]), median(times["8"])
	t.Logf("medians of %d rounds: sequential %v, --concurrent 8 %v: %.2fx", rounds, seq.Round(time.Millisecond), conc.Round(time.Millisecond), float64(seq)/float64(conc))
	if conc*6 > seq {
		t.Errorf("--concurrent 8 took %v, sequential %v: less than 6x faster", conc, seq)
	}
}

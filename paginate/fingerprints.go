package paginate

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// fingerprintSet is the memory of a walk's loop guard: the set of URLs it
// has fetched, each kept as a 16-byte fingerprint (the first 128 bits of
// its SHA-256) rather than as text, so a walk of any length holds 16 bytes
// a page for it (ADR 191).
//
// Fingerprints go to a short unsorted list first; when it fills, the list is
// sorted and merged into sorted runs whose sizes are distinct powers of two
// times the list's length, like the digits of a binary counter. Every run is
// allocated at its exact length, so the set holds 16 bytes per URL plus the
// list; a lookup scans the list and binary-searches each run.
type fingerprintSet struct {
	recent []fingerprint
	runs   [][]fingerprint // runs[i] is empty or sorted, of length recentMax<<i
	buf    []byte
}

type fingerprint struct{ hi, lo uint64 }

// recentMax is how many fingerprints wait, unsorted, for the next merge.
const recentMax = 64

func compareFingerprints(a, b fingerprint) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

func (g *fingerprintSet) fingerprint(key string) fingerprint {
	g.buf = append(g.buf[:0], key...)
	sum := sha256.Sum256(g.buf)
	return fingerprint{binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])}
}

// add records key and reports whether it had been recorded before.
func (g *fingerprintSet) add(key string) (seen bool) {
	f := g.fingerprint(key)
	if g.has(f) {
		return true
	}
	if g.recent == nil {
		g.recent = make([]fingerprint, 0, recentMax)
	}
	g.recent = append(g.recent, f)
	if len(g.recent) == recentMax {
		g.merge()
	}
	return false
}

// contains reports whether key was added, without adding it.
func (g *fingerprintSet) contains(key string) bool { return g.has(g.fingerprint(key)) }

func (g *fingerprintSet) has(f fingerprint) bool {
	if slices.Contains(g.recent, f) {
		return true
	}
	for _, r := range g.runs {
		if _, ok := slices.BinarySearchFunc(r, f, compareFingerprints); ok {
			return true
		}
	}
	return false
}

// merge carries the full list into the runs.
func (g *fingerprintSet) merge() {
	run := slices.Clone(g.recent)
	slices.SortFunc(run, compareFingerprints)
	g.recent = g.recent[:0]
	for i := 0; ; i++ {
		if i == len(g.runs) {
			g.runs = append(g.runs, run)
			return
		}
		if len(g.runs[i]) == 0 {
			g.runs[i] = run
			return
		}
		run = mergeSorted(g.runs[i], run)
		g.runs[i] = nil
	}
}

func mergeSorted(a, b []fingerprint) []fingerprint {
	out := make([]fingerprint, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if compareFingerprints(a[0], b[0]) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// size is the memory the set holds, in bytes: its fingerprints, the
// list's spare room and the key buffer.
func (g *fingerprintSet) size() int {
	n := 16*cap(g.recent) + cap(g.buf) + 24*cap(g.runs)
	for _, r := range g.runs {
		n += 16 * cap(r)
	}
	return n
}

package retry

import (
	"bytes"
	"testing"
)

// TestReadPrefixGrowsExactly: a body read inside the attempt is held in a
// buffer at most twice its size, and never larger than the bound, whatever
// the allocator's own growth would give.
func TestReadPrefixGrowsExactly(t *testing.T) {
	const n = 5<<20 + 123
	body := bytes.Repeat([]byte("x"), n)
	for _, most := range []int64{-1, n + 1, 3 << 20} {
		buf, ended, err := readPrefix(bytes.NewReader(body), -1, most, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(n)
		if most >= 0 && most < want {
			want = most
		}
		if int64(len(buf)) != want || ended != (want == n) {
			t.Fatalf("most %d: read %d bytes (ended %v), want %d", most, len(buf), ended, want)
		}
		if cap(buf) > 2*len(buf) || most >= 0 && int64(cap(buf)) > most {
			t.Errorf("most %d: %d bytes held in a buffer of %d", most, len(buf), cap(buf))
		}
	}
}

// TestReadPrefixTrustsALengthOnlySoFar: a body of the length it announced
// is read into one buffer of that size, while a liar's length costs at
// most trustedLength before its bytes arrive, and a body longer than it
// said is still read whole.
func TestReadPrefixTrustsALengthOnlySoFar(t *testing.T) {
	for _, c := range []struct {
		name      string
		cl, sent  int64
		most      int64
		wantCap   int64 // the buffer's capacity, exactly
		wantBytes int64
	}{
		{"honest", 90_000, 90_000, -1, 90_001, 90_000},
		{"honest, bounded", 90_000, 90_000, 50_000, 50_000, 50_000},
		{"a liar's gigabyte", 1 << 30, 10, -1, trustedLength + 1, 10},
		{"longer than it said", 100, 10_000, -1, 16 << 10, 10_000},
		{"empty", 0, 0, -1, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			buf, ended, err := readPrefix(bytes.NewReader(bytes.Repeat([]byte("x"), int(c.sent))), c.cl, c.most, nil)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(buf)) != c.wantBytes || ended != (c.wantBytes == c.sent) {
				t.Errorf("read %d bytes (ended %v), want %d", len(buf), ended, c.wantBytes)
			}
			if int64(cap(buf)) != c.wantCap {
				t.Errorf("held in a buffer of %d bytes, want %d", cap(buf), c.wantCap)
			}
		})
	}
}

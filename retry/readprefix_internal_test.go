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

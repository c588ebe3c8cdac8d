package fanout

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzDecodeState feeds arbitrary bytes to the state decoder as the file of
// a three-item run. It must never panic, must refuse with one of the state
// errors, or return a state that is consistent: every item is exactly one
// of completed, failed or unfinished, and the lists are in order.
func FuzzDecodeState(f *testing.F) {
	items := []string{"a", "b", "c"}
	digest, err := itemsDigest(items)
	if err != nil {
		f.Fatal(err)
	}
	valid := `{"format":"steady/fanout-state/v1","items":3,"items_sha256":"` + digest +
		`","saved_at":"2026-11-29T10:00:00Z","retry_after":"1m30s","completed":[{"index":0,"result":"A"},{"index":2,"result":"C"}],` +
		`"failures":[{"index":1,"error":"GET https://api.example.com/b: attempts exhausted after 5 attempts"}]}`
	if _, err := decodeState[string, string]([]byte(valid), items); err != nil {
		f.Fatalf("the valid seed is refused: %v", err)
	}
	f.Add([]byte(valid))
	f.Add([]byte(strings.Replace(valid, `"index":2`, `"index":0`, 1)))
	f.Add([]byte(strings.Replace(valid, `"index":1`, `"index":-1`, 1)))
	f.Add([]byte(strings.Replace(valid, `"1m30s"`, `"-5s"`, 1)))
	f.Add([]byte(strings.Replace(valid, `"items":3`, `"items":4`, 1)))
	f.Add([]byte(`{"format":"steady/fanout-state/v1","items":3,"items_sha256":"` + digest + `","completed":null}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := decodeState[string, string](data, items)
		if err != nil {
			if !errors.Is(err, ErrStateFormat) && !errors.Is(err, ErrStateMismatch) {
				t.Fatalf("error %v matches neither ErrStateFormat nor ErrStateMismatch", err)
			}
			return
		}
		seen := make([]int, len(items))
		for i := range in.Completed {
			seen[i]++
		}
		for _, i := range in.Failed {
			seen[i]++
		}
		for _, i := range in.Unfinished {
			seen[i]++
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("item %d is in %d of completed/failed/unfinished, want 1", i, n)
			}
		}
		if len(in.Failures) != len(in.Failed) {
			t.Fatalf("%d failures for %d failed items", len(in.Failures), len(in.Failed))
		}
		for k := 1; k < len(in.Failed); k++ {
			if in.Failed[k-1] >= in.Failed[k] {
				t.Fatalf("failed %v not in order", in.Failed)
			}
		}
		if in.RetryAfter() < 0 {
			t.Fatalf("negative RetryAfter %v", in.RetryAfter())
		}
		if _, err := json.Marshal(in.Completed); err != nil {
			t.Fatalf("decoded results do not encode again: %v", err)
		}
	})
}

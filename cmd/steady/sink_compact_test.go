package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// appendCompact gives json.Compact's bytes for every valid JSON value, and
// never a line break for any input it accepts.
func FuzzAppendCompact(f *testing.F) {
	for _, s := range []string{
		`{"a": 1, "b" : [1, 2, {"c": "x y\nz"}]}`,
		"{\n\t\"name\": \"row \\\"1\\\" \\\\\",\r\n \"v\": null }",
		`"a\\"`, `[ ]`, ` 12 `, `"\u2028"`, `{"k":"\t"}`, `"unterminated`, "\"raw\nline\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := appendCompact(nil, in)
		if json.Valid(in) {
			var want bytes.Buffer
			if cerr := json.Compact(&want, in); cerr != nil {
				t.Fatalf("json.Compact refused a valid value: %v", cerr)
			}
			if err != nil || !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("appendCompact(%q) = %q, %v; want %q", in, got, err, want.Bytes())
			}
		}
		if err == nil && bytes.ContainsAny(got, "\r\n") {
			t.Fatalf("appendCompact(%q) = %q: a line break", in, got)
		}
	})
}

package paginate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// scanItems runs the scanner for items at path (nil: the top level) the way
// a walk does.
func scanItems(data []byte, path []string) (scanner, *syntaxError) {
	if path == nil {
		path = []string{}
	}
	s := scanner{data: data, items: 0}
	s.paths[0] = path
	err := s.scan(1)
	return s, err
}

func TestScanValidity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		in     string
		offset int64 // of the error; -1 when valid
	}{
		{"empty array", `[]`, -1},
		{"spaces", " \t\r\n[ 1 , 2 ]\n", -1},
		{"nested", `{"a":[{"b":null},true,false,"x\u00e9\n\"",-0.5e+10,0,1E3]}`, -1},
		{"scalar", `"just a string"`, -1},
		{"number", `-12.5e-3`, -1},
		{"invalid utf-8 accepted like encoding/json", "[\"\xff\"]", -1},
		{"empty", ``, 0},
		{"only spaces", `   `, 3},
		{"trailing comma", `[1,]`, 3},
		{"missing comma", `[1 2]`, 3},
		{"leading zero", `[01]`, 2},
		{"bare minus", `[-]`, 2},
		{"dot without digits", `[1.]`, 3},
		{"exponent without digits", `[1e+]`, 4},
		{"single quotes", `['a']`, 1},
		{"unquoted key", `{a:1}`, 1},
		{"missing colon", `{"a" 1}`, 5},
		{"control character in string", "[\"a\tb\"]", 3},
		{"bad escape", `["\x"]`, 3},
		{"short unicode escape", `["\u12"]`, 6},
		{"bad literal", `[tru]`, 4},
		{"truncated literal", `[nul`, 4},
		{"truncated", `{"features":[{"a":1},`, 21},
		{"two values", `[] []`, 3},
		{"html", `<!doctype html>`, 0},
		{"bom", "\xef\xbb\xbf[]", 0},
		{"unclosed string", `["abc`, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := scanItems([]byte(c.in), nil)
			if valid := json.Valid([]byte(c.in)); valid != (err == nil) {
				t.Fatalf("scan error %v, but json.Valid says %v", err, valid)
			}
			switch {
			case c.offset < 0 && err != nil:
				t.Fatalf("scan(%q) failed at %d: %s", c.in, err.offset, err.msg)
			case c.offset >= 0 && err == nil:
				t.Fatalf("scan(%q) accepted invalid JSON", c.in)
			case c.offset >= 0 && err.offset != c.offset:
				t.Errorf("scan(%q) failed at byte %d (%s), want %d", c.in, err.offset, err.msg, c.offset)
			}
		})
	}
}

func TestScanDepthLimitMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		in := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		_, err := scanItems(in, nil)
		if got, want := err == nil, json.Valid(in); got != want {
			t.Errorf("depth %d: scanner accepts %v, encoding/json %v", depth, got, want)
		}
	}
}

func TestScanItemsAtPaths(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		in    string
		path  []string
		want  []string
		found bool
		array bool
	}{
		{"top level", `[1, {"a":2} ,"x"]`, nil, []string{`1`, `{"a":2}`, `"x"`}, true, true},
		{"features", `{"type":"FeatureCollection","features":[{"id":1},{"id":2}],"links":[]}`, []string{"features"}, []string{`{"id":1}`, `{"id":2}`}, true, true},
		{"nested path", `{"result":{"count":2,"items":[true,null]}}`, []string{"result", "items"}, []string{`true`, `null`}, true, true},
		{"same key deeper is not it", `{"x":{"items":[1]},"items":[2]}`, []string{"items"}, []string{`2`}, true, true},
		{"inside an array is not it", `{"a":[{"items":[1]}]}`, []string{"items"}, nil, false, false},
		{"escaped key", `{"d\u0061ta":[1]}`, []string{"data"}, []string{`1`}, true, true},
		{"last duplicate wins", `{"data":[1,2],"data":[3]}`, []string{"data"}, []string{`3`}, true, true},
		{"null is empty", `{"data":null}`, []string{"data"}, nil, true, true},
		{"not an array", `{"data":{"a":1}}`, []string{"data"}, nil, true, false},
		{"missing", `{"other":[1]}`, []string{"data"}, nil, false, false},
		{"empty array", `{"data":[ ]}`, []string{"data"}, nil, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, err := scanItems([]byte(c.in), c.path)
			if err != nil {
				t.Fatalf("scan failed: %s at %d", err.msg, err.offset)
			}
			if found := s.found[0].start >= 0; found != c.found || s.isArr != c.array {
				t.Fatalf("found %v array %v, want %v %v", found, s.isArr, c.found, c.array)
			}
			if !c.array {
				return
			}
			var got []string
			for _, it := range s.list.All() {
				got = append(got, string(it))
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("items = %q, want %q", got, c.want)
			}
		})
	}
}

// checkAgainstEncodingJSON is the property the fuzz target and the tests
// share: the scanner accepts exactly what encoding/json accepts, and finds
// the same items it would decode.
func checkAgainstEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	s, err := scanItems(data, nil)
	if valid := json.Valid(data); valid != (err == nil) {
		t.Fatalf("scanner error %v, json.Valid %v for %q", err, valid, data)
	}
	if err != nil {
		if err.offset < 0 || err.offset > int64(len(data)) {
			t.Fatalf("offset %d outside the input of %d bytes", err.offset, len(data))
		}
		return
	}
	var want []json.RawMessage
	if json.Unmarshal(data, &want) != nil {
		if s.isArr && data[s.found[0].start] == '[' {
			t.Fatalf("scanner found an array that encoding/json does not in %q", data)
		}
		return
	}
	checkItems(t, s.list, want, data)
	// The same document under a key, and its items sliced.
	wrapped := append(append([]byte(`{"k":1,"data":`), data...), '}')
	s2, err := scanItems(wrapped, []string{"data"})
	if err != nil {
		t.Fatalf("wrapped under a key: %v", err)
	}
	checkItems(t, s2.list, want, wrapped)
	if n := len(want); n > 0 {
		checkItems(t, s2.list.Slice(n/2, n), want[n/2:], wrapped)
		checkItems(t, s2.list.Slice(1, n).Slice(0, n-1-n/3), want[1:n-n/3], wrapped)
	}
}

// checkItems holds items to what encoding/json decoded: the same texts, and
// each marked compact exactly when json.Compact leaves it as it is.
func checkItems(t *testing.T, items Items, want []json.RawMessage, data []byte) {
	t.Helper()
	if items.Len() != len(want) {
		t.Fatalf("scanner found %d items, encoding/json %d in %q", items.Len(), len(want), data)
	}
	n := 0
	for i, it := range items.All() {
		if i != n || !bytes.Equal(want[i], it) {
			t.Fatalf("item %d (index %d): scanner %q, encoding/json %q", n, i, it, want[n])
		}
		var c bytes.Buffer
		if err := json.Compact(&c, it); err != nil {
			t.Fatalf("item %d: json.Compact: %v", i, err)
		}
		if compact := bytes.Equal(c.Bytes(), it); compact != items.Compact(i) {
			t.Fatalf("item %d %q: marked compact %v, json.Compact says %v", i, it, items.Compact(i), compact)
		}
		n++
	}
	if n != len(want) {
		t.Fatalf("All yielded %d items, Len says %d", n, len(want))
	}
}

func FuzzScanJSON(f *testing.F) {
	for _, s := range []string{`[]`, `[1,"a",{"b":[null,true,false]}]`, `{"features":[{}]}`, `[1e5,-0.0,"\u00e9\\"]`, `[01]`, `["\ud800"]`, "[\"\x00\"]",
		`[ {"a" : 1} , [ 2 ],"x y",3 ]`, `["0123456789abcdef\"", "0123456\u0041789abcdefgh", "long string with no escape at all, past eight bytes"]`,
		"[\"0123456789\x1f\"]", "[1,\n2,\t{\"k\":[\"v\" ]}\r]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstEncodingJSON(t, data)
	})
}

// BenchmarkScanPage scans a page of 1,000 rows shaped like `steady
// serve`'s (an id, a name with an escape now and then, a decimal value, a
// timestamp), the scanner alone: the figure behind a harvest's CPU.
func BenchmarkScanPage(b *testing.B) {
	var page bytes.Buffer
	page.WriteByte('[')
	for i := range 1000 {
		if i > 0 {
			page.WriteByte(',')
		}
		name := fmt.Sprintf("wry kettle #%d", i)
		if i%7 == 0 {
			name = fmt.Sprintf(`rusty back\\slash #%d`, i)
		}
		fmt.Fprintf(&page, `{"id":%d,"name":"%s","value":%d.%02d,"timestamp":"2026-01-01T%02d:%02d:%02dZ"}`, i+1, name, 1000+i*37%9000, i%100, i/3600%24, i/60%60, i%60)
	}
	page.WriteByte(']')
	data := page.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	s := scanner{items: 0}
	for b.Loop() {
		s.data = data
		s.i, s.depth, s.spaces, s.err = 0, 0, 0, nil
		if err := s.scan(1); err != nil || s.list.Len() != 1000 {
			b.Fatalf("%v, %d items", err, s.list.Len())
		}
	}
}

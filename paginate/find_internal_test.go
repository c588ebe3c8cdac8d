package paginate

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestFindItems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		want       []string
		ok         bool
		detail     bool
	}{
		{"top-level array", ` [1,2]`, []string{}, true, false},
		{"features", `{"type":"FeatureCollection","features":[]}`, []string{"features"}, true, false},
		{"preference order, not text order", `{"results":[1],"data":[2],"items":[3]}`, []string{"items"}, true, false},
		{"an array beats a null", `{"items":null,"data":[1]}`, []string{"data"}, true, false},
		{"null when nothing else", `{"data":null,"links":[]}`, []string{"data"}, true, false},
		{"escaped key", `{"fe\u0061tures":[1]}`, []string{"features"}, true, false},
		{"nested is not top level", `{"result":{"items":[1]}}`, nil, false, true},
		{"no candidate", `{"entries":[1]}`, nil, false, true},
		{"empty object", `{}`, nil, false, true},
		{"a scalar", `42`, nil, false, true},
		{"trailing data", `{"items":[1]} x`, nil, false, false},
		{"cut short", `{"items":[1`, nil, false, false},
		{"not JSON", `<html>`, nil, false, false},
		{"empty", ``, nil, false, false},
	}
	for _, c := range cases {
		path, detail, ok := findItems([]byte(c.body))
		if ok != c.ok || !slices.Equal(path, c.want) || (detail != "") != c.detail {
			t.Errorf("%s: findItems = %q, %q, %v", c.name, path, detail, ok)
		}
	}
}

// FuzzFindItems: in valid JSON, a path found is one the walk's scan finds
// an array (or null) at; "not JSON" is said only of text that is not valid
// JSON, and a detail only of text that is.
func FuzzFindItems(f *testing.F) {
	for _, s := range []string{`[]`, `{"features":[1]}`, `{"data":null}`, `{"a":1}`, `"x"`, `{"items":[1]`, `{"d\u0061ta":[]}`, `{"items":{"x":[1]},"results":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		path, detail, ok := findItems(body)
		valid := json.Valid(body)
		switch {
		case ok:
			// A top-level '[' is taken at once; the walk's scan then
			// reports invalid JSON, so only valid text must hold an array.
			s := scanner{data: body, items: 0}
			s.paths[0] = path
			err := s.scan(1)
			if valid && (err != nil || s.found[0].start < 0 || !s.isArr) {
				t.Fatalf("found %q, but the scan finds no array there (%v)", path, err)
			}
			if !valid && err == nil {
				t.Fatalf("found %q in invalid JSON that the scan accepts", path)
			}
		case detail != "":
			if !valid {
				t.Fatalf("detail %q about invalid JSON", detail)
			}
		default:
			if valid {
				t.Fatalf("valid JSON %q reported as not JSON", body)
			}
		}
	})
}

func BenchmarkFindItems(b *testing.B) {
	body := []byte(`{"type":"FeatureCollection","numberReturned":2,"links":[{"rel":"self","href":"/items?page=1"},{"rel":"next","href":"/items?page=2"}],"features":[{"type":"Feature","id":1,"properties":{"name":"a"}},{"type":"Feature","id":2,"properties":{"name":"b"}}]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, _, ok := findItems(body); !ok {
			b.Fatal("not found")
		}
	}
}

package paginate

import (
	"bytes"
	"encoding/json"
	"strings"
)

// findItems finds where a page's items are for [FindItems]: the page itself
// when it is an array, else the first of [ItemKeys] whose top-level member
// is an array. ok is false with an empty detail when the page is not JSON
// (the walk's scan reports that, with the offset), and with a detail that
// says what the page is otherwise.
func findItems(body []byte) (path []string, detail string, ok bool) {
	t := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(t) == 0, t[0] != '[' && t[0] != '{' && !json.Valid(t):
		return nil, "", false
	case t[0] == '[':
		return []string{}, "", true
	case t[0] != '{':
		return nil, "the page is neither an array nor an object", false
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	if _, err := dec.Token(); err != nil {
		return nil, "", false
	}
	arrays := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, "", false
		}
		if len(v) > 0 && v[0] == '[' {
			arrays[key] = true
		}
	}
	for _, k := range ItemKeys {
		if arrays[k] {
			return []string{k}, "", true
		}
	}
	return nil, "found no items: the page is an object without an array at " + strings.Join(ItemKeys, ", "), false
}

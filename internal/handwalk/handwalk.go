// Package handwalk is the page walk people write by hand, the baseline the
// walk benchmarks of the facade and of paginate measure against, so both
// measure against the same loop. It is imported by tests only.
package handwalk

import (
	"encoding/json"
	"io"
	"net/http"
)

// Walk walks OGC-style pages from start: GET, decode with a json.Decoder,
// follow the links[] entry with rel "next". It drains the body so the
// connection is reused, as a careful hand loop does. It returns the pages
// and the features walked, and the first error.
func Walk(client *http.Client, start string) (pages, items int, err error) {
	next := start
	for next != "" {
		resp, err := client.Get(next)
		if err != nil {
			return pages, items, err
		}
		var doc struct {
			Features []json.RawMessage `json:"features"`
			Links    []struct {
				Rel, Href string
			} `json:"links"`
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return pages, items, err
		}
		pages++
		items += len(doc.Features)
		next = ""
		for _, l := range doc.Links {
			if l.Rel == "next" {
				u, err := resp.Request.URL.Parse(l.Href)
				if err != nil {
					return pages, items, err
				}
				next = u.String()
			}
		}
	}
	return pages, items, nil
}

package paginate_test

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

func TestDetect(t *testing.T) {
	cases := []struct {
		name, url string
		header    map[string]string
		body      string
		spelling  string // "" with single
		single    bool
		items     string
		total     int64
		guessed   bool
		err       error
	}{
		{name: "Link header", url: "/i", header: map[string]string{"Link": `</i?page=2>; rel="next"`}, body: `[{"id":1}]`,
			spelling: "link", total: -1},
		{name: "Link header without next", url: "/i?page=3", header: map[string]string{"Link": `</i?page=2>; rel="prev"`}, body: `[]`,
			single: true, total: -1},
		{name: "OGC links", url: "/c/items", body: `{"numberMatched":50,"features":[{"id":1}],"links":[{"rel":"next","href":"/c/items?offset=10"}]}`,
			spelling: "json-links", items: "features", total: 50},
		{name: "links without next", url: "/c/items", body: `{"features":[{"id":1}],"links":[{"rel":"self","href":"/c/items"}]}`,
			single: true, items: "features", total: -1},
		{name: "json-server 1.x", url: "/items?_page=1&_per_page=2",
			body:     `{"first":1,"prev":null,"next":2,"last":100,"pages":100,"items":200,"data":[{"id":1},{"id":2}]}`,
			spelling: "page:_page:_per_page", items: "data", total: 200},
		{name: "json-server 1.x, last page", url: "/items?_page=1&_per_page=2",
			body:   `{"first":1,"prev":null,"next":null,"last":1,"pages":1,"items":2,"data":[{"id":1},{"id":2}]}`,
			single: true, items: "data", total: 2},
		{name: "json-server 1.x without _page", url: "/items?_per_page=2",
			body: `{"first":1,"prev":null,"next":2,"last":100,"pages":100,"items":200,"data":[{"id":1},{"id":2}]}`,
			err:  paginate.ErrUndetected},
		{name: "next URL in the body", url: "/v1/things", body: `{"results":[{"id":1}],"next":"https://api.test/v1/things?page=2"}`,
			spelling: "body-link:next", items: "results", total: -1},
		{name: "a token under next says no parameter", url: "/v1/things", body: `{"data":[{"id":1}],"next":"abc"}`,
			err: paginate.ErrUndetected},
		{name: "next_cursor is sent as cursor", url: "/v1/things", body: `{"data":[{"id":1}],"next_cursor":"abc"}`,
			spelling: "cursor:next_cursor:cursor", items: "data", total: -1, guessed: true},
		{name: "nextPageToken is sent as pageToken", url: "/v1/things", body: `{"items":[{"id":1}],"nextPageToken":"abc"}`,
			spelling: "cursor:nextPageToken:pageToken", items: "items", total: -1, guessed: true},
		{name: "a null cursor is the last page", url: "/v1/things", body: `{"data":[{"id":1}],"next_cursor":null}`,
			single: true, items: "data", total: -1},
		{name: "json-server 0.17 _start/_limit", url: "/items?_start=0&_limit=2", header: map[string]string{"X-Total-Count": "10"},
			body: `[{"id":1},{"id":2}]`, spelling: "offset:_start:_limit", total: 10},
		{name: "json-server 0.17 _limit alone", url: "/items?_limit=2", header: map[string]string{"X-Total-Count": "10"},
			body: `[{"id":1},{"id":2}]`, spelling: "offset:_start:_limit", total: 10, guessed: true},
		{name: "json-server 0.17 _page/_limit", url: "/items?_page=1&_limit=2", header: map[string]string{"X-Total-Count": "10"},
			body: `[{"id":1},{"id":2}]`, spelling: "page:_page:_limit", total: 10},
		{name: "total held in full", url: "/items", header: map[string]string{"X-Total-Count": "2"},
			body: `[{"id":1},{"id":2}]`, single: true, total: 2},
		{name: "PostgREST", url: "/items", header: map[string]string{"Content-Range": "0-99/100000"},
			body: `[{"id":1}]`, spelling: "range:100", total: 100000},
		{name: "PostgREST, all of it", url: "/items", header: map[string]string{"Content-Range": "0-1/2"},
			body: `[{"id":1},{"id":2}]`, single: true, total: 2},
		{name: "PostgREST, empty", url: "/items", header: map[string]string{"Content-Range": "*/0"}, body: `[]`, single: true, total: 0},
		{name: "S3", url: "/bucket?list-type=2", header: map[string]string{"Content-Type": "application/xml"},
			body:     `<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>a</Key></Contents><NextContinuationToken>t1</NextContinuationToken></ListBucketResult>`,
			spelling: "xml:ListBucketResult/NextContinuationToken:continuation-token:ListBucketResult/Contents", total: -1},
		{name: "S3, one page", url: "/bucket?list-type=2",
			body:   `<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a</Key></Contents></ListBucketResult>`,
			single: true, total: -1},
		{name: "a plain array proves nothing", url: "/items", body: `[{"id":1}]`, err: paginate.ErrUndetected},
		{name: "a total and no paging parameter", url: "/items", header: map[string]string{"X-Total-Count": "10"}, body: `[{"id":1}]`,
			err: paginate.ErrUndetected},
		{name: "a broken Link header is no guess", url: "/items", header: map[string]string{"Link": `</i?page=2; rel="next"`},
			body: `[]`, err: paginate.ErrBadLink},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, _ := url.Parse("https://api.test" + c.url)
			p := &paginate.Page{Number: 1, URL: u, Status: 200, Header: http.Header{}, Body: []byte(c.body)}
			for k, v := range c.header {
				p.Header.Set(k, v)
			}
			d, err := paginate.Detect(p)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Spelling != c.spelling || d.Single != c.single || d.Items != c.items || d.Total != c.total || d.Guessed != c.guessed {
				t.Errorf("got %+v, want spelling %q single %v items %q total %d guessed %v", d, c.spelling, c.single, c.items, c.total, c.guessed)
			}
			if !d.Single {
				if n, err := paginate.ParseStyle(d.Spelling); err != nil || paginate.Spelling(n) != d.Spelling {
					t.Errorf("the spelling %q does not read back: %v", d.Spelling, err)
				}
			}
		})
	}
}

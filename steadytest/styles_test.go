package steadytest_test

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// Each client-computed style answers the requests of the server it stands
// for, with the headers and bodies that server sends.
func TestStylesAnswerLikeTheirServers(t *testing.T) {
	cases := []struct {
		name    string
		style   steadytest.Style
		query   string
		header  map[string]string // request headers
		status  int
		headers map[string]string // expected response headers
		body    string            // expected prefix of the body
	}{
		{"json-server _start/_limit", steadytest.Offset, "?_start=2&_limit=2", nil, 200,
			map[string]string{"X-Total-Count": "5"}, `[{"id":3,`},
		{"json-server _start/_end", steadytest.Offset, "?_start=1&_end=2", nil, 200, nil, `[{"id":2,`},
		{"json-server past the end", steadytest.Offset, "?_start=9&_limit=2", nil, 200, nil, `[]`},
		{"json-server _page/_limit", steadytest.PageLimit, "?_page=3&_limit=2", nil, 200,
			map[string]string{"X-Total-Count": "5", "Link": ""}, `[{"id":5,`},
		{"json-server 1.x", steadytest.PerPage, "?_page=2&_per_page=2", nil, 200, map[string]string{"X-Total-Count": ""},
			`{"first":1,"prev":1,"next":3,"last":3,"pages":3,"items":5,"data":[{"id":3,`},
		{"json-server 1.x last page", steadytest.PerPage, "?_page=3&_per_page=2", nil, 200, nil,
			`{"first":1,"prev":2,"next":null,"last":3,"pages":3,"items":5,"data":[{"id":5,`},
		{"PostgREST part", steadytest.Range, "", map[string]string{"Range-Unit": "items", "Range": "1-2"}, 206,
			map[string]string{"Content-Range": "1-2/5"}, `[{"id":2,`},
		{"PostgREST whole", steadytest.Range, "", nil, 200, map[string]string{"Content-Range": "0-4/5"}, `[{"id":1,`},
		{"PostgREST open range", steadytest.Range, "", map[string]string{"Range": "3-"}, 206,
			map[string]string{"Content-Range": "3-4/5"}, `[{"id":4,`},
		{"PostgREST past the end", steadytest.Range, "", map[string]string{"Range": "5-9"}, 416,
			map[string]string{"Content-Range": "*/5"}, `{"error":"range_not_satisfiable"`},
		{"PostgREST backwards", steadytest.Range, "", map[string]string{"Range": "3-1"}, 416, nil, `{"error":"invalid_range"`},
		{"bad _limit", steadytest.Offset, "?_limit=0", nil, 400, nil, `{"error":"invalid_limit"`},
		{"bad _page", steadytest.PerPage, "?_page=0", nil, 400, nil, `{"error":"invalid_page"`},
		{"S3", steadytest.S3, "?list-type=2&max-keys=2", nil, 200, map[string]string{"Content-Type": "application/xml"},
			`<?xml version="1.0" encoding="UTF-8"?>`},
		{"S3 bad token", steadytest.S3, "?continuation-token=nope", nil, 400, nil, `{"error":"invalid_cursor"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, steadytest.ServerOptions{Rows: 5, Style: c.style})
			req, _ := http.NewRequest(http.MethodGet, srv.URL+steadytest.ItemsPath+c.query, nil)
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := newClient(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, c.status, b.String())
			}
			for k, v := range c.headers {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if !strings.HasPrefix(b.String(), c.body) {
				t.Errorf("body %.120s, want it to start with %s", b.String(), c.body)
			}
		})
	}
}

// An S3 listing is well-formed XML whose tokens walk every row once.
func TestS3ListingWalksEveryRow(t *testing.T) {
	srv := newServer(t, steadytest.ServerOptions{Rows: 25, Style: steadytest.S3})
	c := newClient(t)
	var keys []string
	token := ""
	for pages := 0; ; pages++ {
		u := srv.URL + steadytest.ItemsPath + "?list-type=2&max-keys=10"
		if token != "" {
			u += "&continuation-token=" + token
		}
		_, body := get(t, c, u)
		var l struct {
			IsTruncated bool
			KeyCount    int
			Contents    []struct{ Key string }
			Next        string `xml:"NextContinuationToken"`
		}
		if err := xml.Unmarshal(body, &l); err != nil {
			t.Fatal(err)
		}
		if l.KeyCount != len(l.Contents) {
			t.Errorf("KeyCount %d for %d keys", l.KeyCount, len(l.Contents))
		}
		for _, k := range l.Contents {
			keys = append(keys, k.Key)
		}
		if !l.IsTruncated {
			if l.Next != "" || pages != 2 {
				t.Errorf("last page %d has token %q", pages, l.Next)
			}
			break
		}
		token = l.Next
	}
	if len(keys) != 25 || keys[0] != steadytest.S3Key(1) || keys[24] != steadytest.S3Key(25) {
		t.Errorf("keys %v", keys)
	}
}

// With RepeatNext such a server ignores its paging parameter.
func TestStylesRepeatNextIgnoresTheParameter(t *testing.T) {
	srv := newServer(t, steadytest.ServerOptions{Rows: 50, Style: steadytest.Offset,
		Faults: steadytest.Faults{Script: map[int]steadytest.Fault{1: {Kind: steadytest.RepeatNext}}}})
	_, body := get(t, newClient(t), srv.URL+steadytest.ItemsPath+"?_start=20&_limit=5")
	if !strings.HasPrefix(string(body), `[{"id":1,`) {
		t.Errorf("body %.40s, want the first page", body)
	}
}

func TestParseStyleNamesTheNewStyles(t *testing.T) {
	for _, s := range []steadytest.Style{steadytest.Offset, steadytest.PageLimit, steadytest.PerPage, steadytest.Range, steadytest.S3} {
		got, err := steadytest.ParseStyle(s.String())
		if err != nil || got != s {
			t.Errorf("ParseStyle(%q) = %v, %v", s.String(), got, err)
		}
	}
}

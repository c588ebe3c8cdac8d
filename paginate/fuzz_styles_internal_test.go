package paginate

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The XML cursor reader agrees with encoding/xml's own decoding of an S3
// listing: as many Contents elements, each delivered as the exact bytes of
// one well-formed element of the body, in order, and the same token.
func FuzzXMLCursor(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>true</IsTruncated><Contents><Key>a</Key></Contents><Contents><Key>b&amp;c</Key></Contents><NextContinuationToken>t1</NextContinuationToken></ListBucketResult>`,
		`<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>`,
		`<ListBucketResult><Contents/><Contents><Contents>nested</Contents></Contents></ListBucketResult>`,
		`<ListBucketResult><NextContinuationToken><![CDATA[a<b]]></NextContinuationToken></ListBucketResult>`,
		`<ListBucketResult><!-- c --><Contents><Key>x</Key></Contents></ListBucketResult><Other/>`,
		`<s3:ListBucketResult xmlns:s3="urn:x"><s3:Contents/></s3:ListBucketResult>`,
		`<ListBucketResult><Contents>`,
		`<ListBucketResult><NextContinuationToken>a</NextContinuationToken><NextContinuationToken>b</NextContinuationToken></ListBucketResult>`,
		``,
		`{"json": true}`,
	} {
		f.Add([]byte(s))
	}
	x := XMLCursor("ListBucketResult/NextContinuationToken", "continuation-token", "").(xmlStyle)
	f.Fuzz(func(t *testing.T, body []byte) {
		pg, err := x.readXML(body)
		if err != nil {
			return
		}
		last := 0
		for _, it := range pg.items {
			i := bytes.Index(body[last:], it)
			if i < 0 {
				t.Fatalf("item %q is not the body's next bytes", it)
			}
			last += i + len(it)
			d := xml.NewDecoder(bytes.NewReader(it))
			tok, err := d.Token()
			for err == nil {
				if _, ok := tok.(xml.StartElement); ok {
					break
				}
				tok, err = d.Token()
			}
			if se, ok := tok.(xml.StartElement); err != nil || !ok || se.Name.Local != "Contents" {
				t.Fatalf("item %q does not start with a Contents element: %v", it, err)
			}
		}
		var doc struct {
			XMLName  xml.Name   `xml:"ListBucketResult"`
			Contents []struct{} `xml:"Contents"`
			Token    string     `xml:"NextContinuationToken"`
		}
		if xml.Unmarshal(body, &doc) != nil {
			return
		}
		if len(doc.Contents) != len(pg.items) {
			t.Fatalf("%d items, encoding/xml finds %d", len(pg.items), len(doc.Contents))
		}
		if strings.TrimSpace(doc.Token) != strings.TrimSpace(pg.token) {
			t.Fatalf("token %q, encoding/xml reads %q", pg.token, doc.Token)
		}
	})
}

// ParseStyle reads any text without panicking; what it accepts it spells
// back the same way, and what it refuses is a *StyleError.
func FuzzParseStyle(f *testing.F) {
	for _, s := range []string{"link", "auto", "offset:_start:_limit", "page:_page", "range:100", "range",
		"cursor:meta.next:cursor", "body-link:next", "xml:ListBucketResult/NextContinuationToken:continuation-token",
		"offset::", "range:-1", "page:token", "xml:a//b:c", "offset:a:b:c", "range:99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseStyle(s)
		if err != nil {
			if _, ok := err.(*StyleError); !ok {
				t.Fatalf("ParseStyle(%q) error %T %v", s, err, err)
			}
			return
		}
		spelled := Spelling(n)
		again, err := ParseStyle(spelled)
		if err != nil || Spelling(again) != spelled {
			t.Fatalf("%q spelled %q, which reads back as %v, %v", s, spelled, again, err)
		}
	})
}

// Detect reads any first page without panicking, and what it proves
// spells back through ParseStyle.
func FuzzDetect(f *testing.F) {
	f.Add("/items?_page=1&_per_page=2", "", "", []byte(`{"next":2,"pages":3,"items":6,"data":[{"id":1},{"id":2}]}`))
	f.Add("/items?_limit=2", "", "", []byte(`[{"id":1},{"id":2}]`))
	f.Add("/items", `</i?p=2>; rel="next"`, "", []byte(`[]`))
	f.Add("/items", "", "0-99/1000", []byte(`[{"id":1}]`))
	f.Add("/b", "", "", []byte(`<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t</NextContinuationToken></ListBucketResult>`))
	f.Add("/v", "", "", []byte(`{"results":[],"next":"/v?page=2","links":[{"rel":"next","href":"x"}]}`))
	f.Fuzz(func(t *testing.T, rawURL, link, contentRange string, body []byte) {
		u, err := url.Parse("https://api.test" + rawURL)
		if err != nil {
			return
		}
		p := &Page{Number: 1, URL: u, Header: http.Header{}, Body: body}
		if link != "" {
			p.Header.Set("Link", link)
		}
		if contentRange != "" {
			p.Header.Set("Content-Range", contentRange)
		}
		d, err := Detect(p)
		if err != nil || d.Single {
			return
		}
		if n, err := ParseStyle(d.Spelling); err != nil || Spelling(n) != d.Spelling {
			t.Fatalf("detected %q, which reads back as %v", d.Spelling, err)
		}
	})
}

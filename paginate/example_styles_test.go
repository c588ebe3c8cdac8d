package paginate_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/steadytest"
)

// An offset walk of json-server's _start/_limit, four pages in flight at
// once and yielded in order.
func ExampleOffset() {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 250, Style: steadytest.Offset})
	defer srv.Close()

	next, err := paginate.ParseStyle("offset:_start:_limit")
	if err != nil {
		fmt.Println(err)
		return
	}
	req, _ := http.NewRequest("GET", srv.URL+steadytest.ItemsPath+"?_limit=100", nil)
	w := paginate.NewWalk(srv.Client(), req, paginate.Options{Next: next, Concurrency: 4})
	for page, err := range w.All(context.Background()) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(page.URL.RequestURI(), page.Items.Len())
	}
	s := w.Summary()
	fmt.Println(s.Items, "of", s.Total, "complete:", s.Complete)
	// Output:
	// /items?_limit=100 100
	// /items?_limit=100&_start=100 100
	// /items?_limit=100&_start=200 50
	// 250 of 250 complete: true
}

// Detect proves a style from a first page, here json-server 1.x's.
func ExampleDetect() {
	u, _ := url.Parse("http://api.test/items?_page=1&_per_page=2")
	p := &paginate.Page{Number: 1, URL: u, Header: http.Header{},
		Body: []byte(`{"first":1,"prev":null,"next":2,"last":3,"pages":3,"items":6,"data":[{"id":1},{"id":2}]}`)}
	d, err := paginate.Detect(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Spelling, d.Items, d.Total)

	p.Body = []byte(`[{"id":1}]`)
	_, err = paginate.Detect(p)
	fmt.Println(err)
	// Output:
	// page:_page:_per_page data 6
	// paginate: page 1 (http://api.test/items?_page=1&_per_page=2): cannot tell how the pages are linked: nothing on the first page names a next page or announces a total; name the paging style explicitly, such as offset:PARAM[:LIMITPARAM] or page:PARAM
}

// An S3 ListObjectsV2 listing, followed by its continuation tokens; each
// item is the XML of one Contents element.
func ExampleXMLCursor() {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 5, Style: steadytest.S3})
	defer srv.Close()

	next := paginate.XMLCursor("ListBucketResult/NextContinuationToken", "continuation-token", "")
	req, _ := http.NewRequest("GET", srv.URL+steadytest.ItemsPath+"?list-type=2&max-keys=2", nil)
	for page, err := range paginate.Pages(context.Background(), srv.Client(), req, paginate.Options{Next: next}) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		for _, first := range page.Items.All() {
			fmt.Println(page.Number, page.Items.Len(), string(first[:39]))
			break
		}
	}
	// Output:
	// 1 2 <Contents><Key>rows/00000001.json</Key>
	// 2 2 <Contents><Key>rows/00000003.json</Key>
	// 3 1 <Contents><Key>rows/00000005.json</Key>
}

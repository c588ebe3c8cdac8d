package paginate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/steadyhttp/steady/paginate"
)

// A walk over an OGC API Features collection: items under "features", the
// next page in links[].
func ExamplePages() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("page") {
		case "":
			fmt.Fprint(w, `{"features":[{"id":"a"},{"id":"b"}],"links":[{"rel":"next","href":"items?page=2"}]}`)
		case "2":
			fmt.Fprint(w, `{"features":[{"id":"c"}],"links":[{"rel":"prev","href":"items"}]}`)
		}
	}))
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/collections/lakes/items", nil)
	opt := paginate.Options{Next: paginate.JSONLinks, Items: "features"}
	for page, err := range paginate.Pages(context.Background(), srv.Client(), req, opt) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(page.Number, page.URL.RequestURI(), page.Items.Len())
		for _, item := range page.Items.All() {
			fmt.Println(" ", string(item))
		}
	}
	// Output:
	// 1 /collections/lakes/items 2
	//   {"id":"a"}
	//   {"id":"b"}
	// 2 /collections/lakes/items?page=2 1
	//   {"id":"c"}
}

// A Walk keeps a summary; a refused link ends the walk after the page that
// carried it.
func ExampleWalk_Summary() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Remaining", "41")
		w.Header().Set("Link", `<https://evil.example/harvest>; rel="next"`)
		fmt.Fprint(w, `[1,2,3]`)
	}))
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/rows", nil)
	walk := paginate.NewWalk(srv.Client(), req, paginate.Options{})
	for _, err := range walk.All(context.Background()) {
		if errors.Is(err, paginate.ErrCrossHost) {
			var e *paginate.Error
			errors.As(err, &e)
			fmt.Println("refused a link to", e.Host)
		}
	}
	s := walk.Summary()
	fmt.Println(s.Pages, "page,", s.Items, "items, complete:", s.Complete)
	fmt.Println("remaining quota:", s.RateLimit.Get("X-RateLimit-Remaining"))
	// Output:
	// refused a link to evil.example
	// 1 page, 3 items, complete: false
	// remaining quota: 41
}

// A cursor API: the cursor field is sent back as a query parameter until it
// is null.
func ExampleCursor() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("after") {
		case "":
			fmt.Fprint(w, `{"data":[1,2],"paging":{"next":"c2"}}`)
		case "c2":
			fmt.Fprint(w, `{"data":[3],"paging":{"next":null}}`)
		}
	}))
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/rows?limit=2", nil)
	opt := paginate.Options{Next: paginate.Cursor("paging.next", "after"), Items: "data"}
	for page, err := range paginate.Pages(context.Background(), srv.Client(), req, opt) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(page.URL.RawQuery, page.Items.Len())
	}
	// Output:
	// limit=2 2
	// limit=2&after=c2 1
}

func ExamplePolicy_Resolve_relative() {
	from, _ := url.Parse("https://api.example.gov/v1/items?page=1")
	for _, href := range []string{
		"?page=2",
		"https://bob:pw@api.example.gov/v1/items?page=2",
		"https://api.example.gov.evil.com/v1/items?page=2",
		"http://api.example.gov/v1/items?page=2",
		"javascript:alert(1)",
	} {
		u, err := paginate.Policy{}.Resolve(href, from)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(u)
	}
	// Output:
	// https://api.example.gov/v1/items?page=2
	// https://api.example.gov/v1/items?page=2
	// paginate: refusing to follow a cross-host next-page link: https://api.example.gov.evil.com/v1/items?page=2 points at api.example.gov.evil.com rather than api.example.gov
	// paginate: refusing to follow a next-page link that downgrades https to http: http://api.example.gov/v1/items?page=2
	// paginate: refusing to follow a next-page link that is not http(s): javascript:alert(1)
}

// A service whose links name the internal host behind its load balancer.
func ExamplePolicy_Resolve() {
	p := paginate.Policy{CanonicalHost: "api.example.gov"}
	from, _ := url.Parse("https://api.example.gov/items")
	u, err := p.Resolve("http://10.0.3.7:8080/items?page=2", from)
	fmt.Println(u, err)
	// Output:
	// https://api.example.gov/items?page=2 <nil>
}

func ExampleParseLinkHeader() {
	links := paginate.ParseLinkHeader([]string{
		`</items?page=1>; rel="first", </items?page=3>; rel="next"; title="Page 3, of 9"`,
		`</items?page=9>; rel=last`,
	})
	for _, l := range links {
		title, _ := l.Param("title")
		fmt.Printf("%s %q %q\n", l.Target, l.Rel, title)
	}
	// Output:
	// /items?page=1 "first" ""
	// /items?page=3 "next" "Page 3, of 9"
	// /items?page=9 "last" ""
}

// Options.Secrets keeps the client's keys out of what a walk reports, here
// the body of a page that echoes the request.
func ExampleOptions_secrets() {
	const key = "k-5ec4e7"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "bad key; you sent %s", r.Header.Get("X-Api-Key"))
	}))
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/rows", nil)
	req.Header.Set("X-Api-Key", key)
	opt := paginate.Options{Secrets: []string{key}}
	for _, err := range paginate.Pages(context.Background(), srv.Client(), req, opt) {
		var e *paginate.Error
		if errors.As(err, &e) {
			fmt.Println(e.Status, e.Excerpt)
		}
	}
	// Output:
	// 401 bad key; you sent REDACTED
}

package paginate_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/paginate"
)

// The loop guard's hostile cases (issue 10, item 7): no page is delivered
// twice, however its URL is spelled or reached.

const loopKey = "L00P-key-5ec4e7"

func TestWalkNoPageTwice(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// next returns page 1's next link, given the key-carrying query
		// the server received; "" for none.
		next func(q string) string
		// page2 answers the second request; nil serves a page.
		page2 func(w http.ResponseWriter, r *http.Request)
		// pages is how many pages are delivered before the loop error.
		pages int
	}{
		{name: "a self link with a fragment", next: func(string) string { return "/items#top" }, pages: 1},
		{name: "a self link echoing the key", next: func(q string) string { return "/items?" + q }, pages: 1},
		{name: "a self link echoing the key under another name", next: func(string) string { return "/items?appid=" + loopKey }, pages: 1},
		{name: "a next link that redirects back to page 1", next: func(string) string { return "/items?page=2" },
			page2: func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/items", http.StatusFound) }, pages: 1},
		{name: "a next link that redirects back to page 1 with the key", next: func(string) string { return "/items?page=2" },
			page2: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/items?api_key="+loopKey+"#again", http.StatusFound)
			}, pages: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var hits [3]int
			srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("api_key") != loopKey {
					http.Error(w, "no key", http.StatusUnauthorized)
					return
				}
				if r.URL.Query().Get("page") == "2" {
					hits[2]++
					if c.page2 != nil {
						c.page2(w, r)
						return
					}
				} else {
					hits[1]++
					q := r.URL.RawQuery
					w.Header().Set("Link", "<"+c.next(q)+`>; rel="next"`)
				}
				io.WriteString(w, `[{"id":1}]`)
			})
			k := credentials.Key{Query: "api_key", Value: loopKey, Hosts: []string{"http://" + srv.Listener.Addr().String()}}
			wiretest.For(t).Key(k)
			client := countingClient(t, credentials.NewTransport(srv.Client().Transport, k))
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/items", nil)
			pages, err := collect(paginate.Pages(context.Background(), client, req, paginate.Options{Secrets: []string{loopKey}}))
			if len(pages) != c.pages {
				t.Errorf("%d pages delivered, want %d; requests %v", len(pages), c.pages, srv.requests())
			}
			if !errors.Is(err, paginate.ErrLoop) {
				t.Fatalf("err %v, want ErrLoop", err)
			}
			// A redirect back is refused before the hop is sent.
			if hits[1] != 1 {
				t.Errorf("page 1 was served %d times, want once; requests %v", hits[1], srv.requests())
			}
			if strings.Contains(err.Error(), loopKey) || strings.Contains(err.Error(), url.QueryEscape(loopKey)) {
				t.Errorf("the loop error quotes the key: %v", err)
			}
			for _, p := range pages {
				if strings.Contains(p.URL.String(), loopKey) {
					t.Errorf("Page.URL %s carries the key", p.URL)
				}
			}
		})
	}
}

func TestWalkNoPageTwiceThroughATransportThatFollowsRedirects(t *testing.T) {
	t.Parallel()
	// A transport that follows redirects itself hands back page 1's
	// response for the request of page 2: the final URL says so, and the
	// page is not delivered again.
	srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			http.Redirect(w, r, "/items#again", http.StatusFound)
			return
		}
		w.Header().Set("Link", `</items?page=2>; rel="next"`)
		io.WriteString(w, `[{"id":1}]`)
	})
	inner := srv.Client()
	following := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		c := &http.Client{Transport: inner.Transport}
		return c.Do(r.Clone(r.Context()))
	})
	client := countingClient(t, following)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/items", nil)
	pages, err := collect(paginate.Pages(context.Background(), client, req, paginate.Options{}))
	if len(pages) != 1 || !errors.Is(err, paginate.ErrLoop) {
		t.Fatalf("%d pages, err %v; want page 1 once, then ErrLoop", len(pages), err)
	}
}

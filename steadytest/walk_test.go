package steadytest_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// walk follows next links from start with a plain loop and returns the ids
// received and the number of pages.
func walk(t *testing.T, c *http.Client, style steadytest.Style, start string) (ids []int, pages int) {
	t.Helper()
	next := start
	for next != "" {
		pages++
		if pages > 10000 {
			t.Fatal("walk does not end")
		}
		resp, body := get(t, c, next)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s: %s", next, resp.Status, body)
		}
		var rows []steadytest.Row
		switch style {
		case steadytest.LinkHeader:
			decode(t, body, &rows)
			next = nextFromLink(resp.Header)
		case steadytest.JSONLinks:
			var p linksPage
			decode(t, body, &p)
			rows, next = p.Items, p.next()
		case steadytest.Cursor:
			var p cursorPage
			decode(t, body, &p)
			rows, next = p.Data, ""
			if p.NextCursor != nil {
				u, err := url.Parse(start)
				if err != nil {
					t.Fatal(err)
				}
				q := u.Query()
				q.Set("cursor", *p.NextCursor)
				u.RawQuery = q.Encode()
				next = u.String()
			}
		}
		for _, r := range rows {
			if want := steadytest.RowFor(r.ID); r != want {
				t.Fatalf("row %d = %+v, want %+v", r.ID, r, want)
			}
			ids = append(ids, r.ID)
		}
	}
	return ids, pages
}

func TestWalkEachStyleReceivesEveryRowOnce(t *testing.T) {
	styles := []steadytest.Style{steadytest.LinkHeader, steadytest.JSONLinks, steadytest.Cursor}
	cases := []struct {
		name      string
		rows      int
		query     string
		wantPages int
	}{
		{"default limit", 1000, "", 10},
		{"limit not dividing rows", 1000, "?limit=7", 143},
		{"limit above the maximum is clamped", 2500, "?limit=5000", 3},
		{"one row", 1, "?limit=10", 1},
		{"rows equal to limit", 50, "?limit=50", 1},
		{"own parameters kept", 30, "?filter=a%20b&limit=10", 3},
	}
	for _, style := range styles {
		for _, c := range cases {
			t.Run(style.String()+"/"+c.name, func(t *testing.T) {
				s := newServer(t, steadytest.ServerOptions{Rows: c.rows, Style: style})
				ids, pages := walk(t, newClient(t), style, s.URL+steadytest.ItemsPath+c.query)
				if len(ids) != c.rows {
					t.Fatalf("received %d rows, want %d", len(ids), c.rows)
				}
				for i, id := range ids {
					if id != i+1 {
						t.Fatalf("row %d has id %d, want %d (gap or duplicate)", i, id, i+1)
					}
				}
				if pages != c.wantPages {
					t.Errorf("pages = %d, want %d", pages, c.wantPages)
				}
				if got := len(s.Requests()); got != pages {
					t.Errorf("server saw %d requests for %d pages", got, pages)
				}
			})
		}
	}
}

func TestNextLinksKeepTheClientsParametersAndHost(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{Rows: 30, Style: steadytest.JSONLinks})
	resp, body := get(t, newClient(t), s.URL+steadytest.ItemsPath+"?filter=a%20b&limit=10&offset=10")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	var p linksPage
	decode(t, body, &p)
	if got, want := p.next(), s.URL+steadytest.ItemsPath+"?filter=a%20b&limit=10&offset=20"; got != want {
		t.Errorf("next = %q, want %q", got, want)
	}
	if got, want := p.Links[0].Href, s.URL+steadytest.ItemsPath+"?filter=a%20b&limit=10&offset=10"; p.Links[0].Rel != "self" || got != want {
		t.Errorf("first link = %+v, want self %q", p.Links[0], want)
	}
}

func TestLinkHeaderNamesFirstPrevNextLast(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{Rows: 95})
	resp, _ := get(t, newClient(t), s.URL+steadytest.ItemsPath+"?limit=10&offset=30")
	base := s.URL + steadytest.ItemsPath + "?limit=10&offset="
	want := "<" + base + `40>; rel="next", <` + base + `90>; rel="last", <` + base + `0>; rel="first", <` + base + `20>; rel="prev"`
	if got := resp.Header.Get("Link"); got != want {
		t.Errorf("Link =\n %s\nwant\n %s", got, want)
	}
	if got := resp.Header.Get("X-Total-Count"); got != "95" {
		t.Errorf("X-Total-Count = %q, want 95", got)
	}
}

func TestOffsetPastTheEndIsAnEmptyLastPage(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{Rows: 10})
	resp, body := get(t, newClient(t), s.URL+steadytest.ItemsPath+"?offset=99999999999999999999")
	if resp.StatusCode != http.StatusOK || string(body) != "[]" || nextFromLink(resp.Header) != "" {
		t.Errorf("got %s %q next %q, want 200 [] and no next link", resp.Status, body, nextFromLink(resp.Header))
	}
}

func TestBadParametersAre400WithAJSONError(t *testing.T) {
	cases := []struct {
		name  string
		style steadytest.Style
		query string
		code  string
	}{
		{"garbage limit", steadytest.LinkHeader, "limit=abc", "invalid_limit"},
		{"zero limit", steadytest.LinkHeader, "limit=0", "invalid_limit"},
		{"negative limit", steadytest.LinkHeader, "limit=-5", "invalid_limit"},
		{"empty limit", steadytest.LinkHeader, "limit=", "invalid_limit"},
		{"decimal limit", steadytest.JSONLinks, "limit=1.5", "invalid_limit"},
		{"garbage offset", steadytest.LinkHeader, "offset=x", "invalid_offset"},
		{"signed offset", steadytest.JSONLinks, "offset=+3", "invalid_offset"},
		{"garbage cursor", steadytest.Cursor, "cursor=garbage", "invalid_cursor"},
		{"cursor of plain offset", steadytest.Cursor, "cursor=100", "invalid_cursor"},
		{"empty cursor", steadytest.Cursor, "cursor=", "invalid_cursor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, steadytest.ServerOptions{Style: c.style})
			resp, body := get(t, newClient(t), s.URL+steadytest.ItemsPath+"?"+c.query)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status = %s, want 400", resp.Status)
			}
			var e struct{ Error, Message string }
			decode(t, body, &e)
			if e.Error != c.code || e.Message == "" {
				t.Errorf("error = %+v, want code %q and a message", e, c.code)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
}

func TestOtherPathsAndMethods(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{})
	c := newClient(t)
	if resp, _ := get(t, c, s.URL+"/nope"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: %s, want 404", resp.Status)
	}
	resp, err := c.Post(s.URL+steadytest.ItemsPath, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %s Allow %q, want 405 with Allow: GET, HEAD", resp.Status, resp.Header.Get("Allow"))
	}
	resp, body := get(t, c, s.URL+"/")
	var idx struct{ Items string }
	decode(t, body, &idx)
	if resp.StatusCode != http.StatusOK || idx.Items != s.URL+steadytest.ItemsPath {
		t.Errorf("index: %s %s", resp.Status, body)
	}
	for _, r := range s.Requests() {
		if r.Seq != 0 {
			t.Errorf("request %s %s got data sequence number %d", r.Method, r.URL, r.Seq)
		}
	}
}

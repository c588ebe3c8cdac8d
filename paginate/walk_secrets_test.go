package paginate_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"go/token"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/paginate"
)

const (
	// walkKey escapes differently in a query and in a path.
	walkKey = "K3y/5ec+4e7=do&not~leak"
	// walkControl travels beside the key in an ordinary parameter, so it
	// must show: proof that the texts searched name the requests.
	walkControl = "CONTROL-in-plain-sight"
)

// walkKeyForms are the encodings of walkKey a text could carry it in.
var walkKeyForms = []string{
	walkKey,
	url.QueryEscape(walkKey),
	url.PathEscape(walkKey),
	base64.StdEncoding.EncodeToString([]byte("user:" + walkKey)),
	base64.StdEncoding.EncodeToString([]byte(walkKey + ":")),
	base64.URLEncoding.EncodeToString([]byte("x" + walkKey)),
}

// errorTexts returns what a caller could print of err: Error(), %+v and
// %#v of it and of every error of an exported type in its chain, which
// errors.As hands out. (An error whose text held a secret stays in the
// chain behind an unexported wrapper, for errors.Is and errors.As; its
// type is what a caller names: ADRs 37 and 120.)
func errorTexts(err error) []string {
	var out []string
	for seen := 0; err != nil && seen < 20; seen++ {
		if seen == 0 || exportedType(err) {
			out = append(out, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
		}
		err = errors.Unwrap(err)
	}
	return out
}

// exportedType reports whether errors.As can name e's type.
func exportedType(e error) bool {
	t := reflect.TypeOf(e)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name() != "" && token.IsExported(t.Name())
}

// checkNoKey fails t for each text holding a form of walkKey.
func checkNoKey(t *testing.T, what string, texts ...string) {
	t.Helper()
	for _, text := range texts {
		for _, form := range walkKeyForms {
			if strings.Contains(text, form) {
				t.Errorf("%s leaks the key as %q: %s", what, form, text)
				break
			}
		}
	}
}

// keyLink is page 1's next link to path, with the key in a credential
// parameter and in an ordinary one.
func keyLink(path string) string {
	return path + "?page=2&api_key=" + url.QueryEscape(walkKey) + "&q=" + url.QueryEscape(walkKey) + "&c=" + walkControl
}

func TestWalkSecretsRedacted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// page2 answers the request for page 2; link is page 1's next
		// link, as written in its Link header.
		page2 func(w http.ResponseWriter, r *http.Request)
		link  string
		opt   paginate.Options
		err   error
		check func(t *testing.T, err error, e *paginate.Error)
	}{
		{name: "a status page echoing the query and Basic credentials",
			page2: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, "bad key; you sent query=%s authorization=%s", r.URL.RawQuery, r.Header.Get("Authorization"))
			},
			link: keyLink("/items"), err: paginate.ErrStatus,
			check: func(t *testing.T, err error, e *paginate.Error) {
				// The link's parameters that echo the key are not followed
				// (ADR 132), so the server never saw them.
				if strings.Contains(e.Excerpt, "api_key") || strings.Contains(e.Excerpt, "q=") || !strings.Contains(e.Excerpt, "authorization=Basic REDACTED") ||
					!strings.Contains(e.Excerpt, walkControl) {
					t.Errorf("excerpt %q, want the echoing parameters gone and the Basic value replaced", e.Excerpt)
				}
			}},
		{name: "a dropped connection",
			page2: func(w http.ResponseWriter, r *http.Request) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.(*net.TCPConn).SetLinger(0)
					conn.Close()
				}
			},
			link: keyLink("/items"),
			check: func(t *testing.T, err error, e *paginate.Error) {
				var ue *url.Error
				if !errors.As(err, &ue) || !strings.Contains(ue.URL, walkControl) || strings.Contains(ue.URL, "q=") {
					t.Errorf("the *url.Error in the chain names %q, want the page's URL, redacted", ue.URL)
				}
			}},
		{name: "a redirect loop with the key in its Location",
			page2: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, keyLink("/items")+"&n="+fmt.Sprint(len(r.URL.RawQuery)), http.StatusFound)
			},
			link: keyLink("/items"),
			check: func(t *testing.T, err error, e *paginate.Error) {
				var ue *url.Error
				if !errors.As(err, &ue) || !strings.Contains(ue.URL, walkControl) || !strings.Contains(ue.Error(), "redirects") {
					t.Errorf("the *url.Error in the chain is %v, want the Location, redacted", ue)
				}
			}},
		{name: "a cross-host link with the key in an ordinary parameter",
			link: "https://elsewhere.example/items?q=" + url.QueryEscape(walkKey) + "&c=" + walkControl, err: paginate.ErrCrossHost,
			check: func(t *testing.T, err error, e *paginate.Error) {
				if !strings.Contains(e.Link, "q=REDACTED&c="+walkControl) || !strings.Contains(err.Error(), e.Link) {
					t.Errorf("error %q names link %q, want it redacted", err, e.Link)
				}
			}},
		{name: "a link whose port is the key",
			link: "http://127.0.0.1:" + url.PathEscape(walkKey) + "/items", err: paginate.ErrBadLink,
			check: func(t *testing.T, err error, e *paginate.Error) {
				if !strings.Contains(e.Detail, "REDACTED") {
					t.Errorf("detail %q, want the port quoted, redacted", e.Detail)
				}
			}},
		{name: "a JSON next link whose method is the key",
			opt: paginate.Options{Next: paginate.JSONLinks, Items: paginate.NoItems},
			err: paginate.ErrLinkMethod,
			check: func(t *testing.T, err error, e *paginate.Error) {
				if !strings.Contains(err.Error(), "REDACTED") {
					t.Errorf("error %q, want the method quoted, redacted", err)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				if pageNumber(r) == 2 {
					c.page2(w, r)
					return
				}
				w.Header().Set("Link", "<"+c.link+`>; rel="next"`)
				fmt.Fprintf(w, `{"links":[{"rel":"next","method":%q,"href":"/items?page=2"}]}`, walkKey)
			})
			var mu sync.Mutex
			var events []string
			opt := c.opt
			if opt.Items == "" {
				opt.Items = paginate.NoItems
			}
			opt.Secrets = []string{"", walkKey}
			opt.Reporter = event.ReporterFunc(func(e event.Event) {
				mu.Lock()
				events = append(events, fmt.Sprintf("%+v", e))
				mu.Unlock()
			})
			req, _ := http.NewRequest("GET", srv.URL+"/items", nil)
			req.SetBasicAuth("user", walkKey)
			pages, err := collect(paginate.Pages(context.Background(), srv.client(t), req, opt))
			var e *paginate.Error
			if len(pages) != 1 || !errors.As(err, &e) || e.Page == 0 || (c.err != nil && !errors.Is(err, c.err)) {
				t.Fatalf("%d pages, error %v; want page 1, then a *paginate.Error naming its page (%v)", len(pages), err, c.err)
			}
			c.check(t, err, e)
			checkNoKey(t, "the error", errorTexts(err)...)
			mu.Lock()
			defer mu.Unlock()
			checkNoKey(t, "an event", events...)
		})
	}
}

func TestWalkSecretsInEvents(t *testing.T) {
	t.Parallel()
	var events []event.Event
	rep := event.ReporterFunc(func(e event.Event) { events = append(events, e) })
	link := func(_ *http.Request, resp *http.Response) {
		if resp.Request.URL.Query().Get("page") == "" {
			resp.Header.Set("Link", "<"+keyLink("/items")+`>; rel="next"`)
		} else {
			resp.Header.Del("Link")
		}
	}
	req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
	opt := paginate.Options{Reporter: rep, Secrets: []string{walkKey}}
	if _, err := collect(paginate.Pages(context.Background(), &http.Client{Transport: fakeAPI(3, link)}, req, opt)); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 {
		t.Fatalf("%d events, want 2", len(events))
	}
	// The parameters that echo the key are not followed (ADR 132).
	if want := "https://api.example.gov/items?page=2&c=" + walkControl; events[1].URL != want {
		t.Errorf("page 2's event URL %q, want %q", events[1].URL, want)
	}
	for _, e := range events {
		checkNoKey(t, "an event", fmt.Sprintf("%+v", e))
	}
}

func TestWalkURLErrorRedactedWithoutSecrets(t *testing.T) {
	t.Parallel()
	// With no Secrets, a *url.Error in the chain still carries the URL
	// redacted by parameter name, never raw, and the cause stays
	// reachable.
	cause := errors.New("connection reset by peer")
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("page") == "2" {
			return nil, cause
		}
		return &http.Response{StatusCode: 200, Request: r, Body: http.NoBody,
			Header: http.Header{"Link": {"</items?page=2&api_key=" + url.QueryEscape(walkKey) + `>; rel=next`}}}, nil
	})
	req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
	_, err := collect(paginate.Pages(context.Background(), &http.Client{Transport: rt}, req, paginate.Options{Items: paginate.NoItems}))
	var ue *url.Error
	if !errors.Is(err, cause) || !errors.As(err, &ue) {
		t.Fatalf("error %v, want the cause inside a *url.Error", err)
	}
	if want := "https://api.example.gov/items?page=2&api_key=REDACTED"; ue.URL != want {
		t.Errorf("*url.Error names %q, want %q", ue.URL, want)
	}
	if want := "paginate: page 2 (https://api.example.gov/items?page=2&api_key=REDACTED): connection reset by peer"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	checkNoKey(t, "the error", errorTexts(err)...)
}

func TestWalkSecretsKeepErrorTypes(t *testing.T) {
	t.Parallel()
	// A cause whose text holds a secret is hidden behind a wrapper; the
	// *url.Error above it must still answer Timeout from the cause, and
	// errors.As must still find it.
	cause := &keyedTimeout{}
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("page") == "2" {
			return nil, cause
		}
		return &http.Response{StatusCode: 200, Request: r, Body: http.NoBody,
			Header: http.Header{"Link": {`</items?page=2>; rel=next`}}}, nil
	})
	req, _ := http.NewRequest("GET", "https://api.example.gov/items", nil)
	opt := paginate.Options{Items: paginate.NoItems, Secrets: []string{walkKey}}
	_, err := collect(paginate.Pages(context.Background(), &http.Client{Transport: rt}, req, opt))
	var ue *url.Error
	var kt *keyedTimeout
	if !errors.As(err, &ue) || !ue.Timeout() || !errors.As(err, &kt) || kt != cause {
		t.Fatalf("error %v: want a *url.Error that times out, around the cause", err)
	}
	if !strings.Contains(err.Error(), "timed out after sending REDACTED") {
		t.Errorf("error %q, want the cause's text with the key replaced", err)
	}
	checkNoKey(t, "the error", err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err), ue.Error(), fmt.Sprintf("%#v", ue))
}

// keyedTimeout is a timeout whose text quotes the key, as an error that
// echoes what was sent does.
type keyedTimeout struct{}

func (*keyedTimeout) Error() string   { return "timed out after sending " + walkKey }
func (*keyedTimeout) Timeout() bool   { return true }
func (*keyedTimeout) Temporary() bool { return true }

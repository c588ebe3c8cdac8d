package paginate_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

// walkAll runs a walk and returns the items of each page and the error.
func walkAll(t *testing.T, client *http.Client, start string, opt paginate.Options) (pages []string, err error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, start, nil)
	for p, werr := range paginate.Pages(context.Background(), client, req, opt) {
		if werr != nil {
			return pages, werr
		}
		pages = append(pages, string(p.Body))
	}
	return pages, nil
}

// A next link on the allowed host that redirects to another one (the cloud
// metadata address, say) must not become a page: the hop is refused before
// it is sent, after the pages already received were delivered.
func TestWalkRefusesRedirectToForeignHost(t *testing.T) {
	metadata := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `[{"secret":"instance credentials"}]`)
	})
	api := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/items":
			w.Header().Set("Link", `</items2>; rel="next"`)
			fmt.Fprint(w, `[{"id":1}]`)
		case "/items2":
			http.Redirect(w, r, metadata.URL+"/latest/meta-data/", http.StatusFound)
		}
	})
	pages, err := walkAll(t, api.client(t), api.URL+"/items", paginate.Options{})
	if len(pages) != 1 || pages[0] != `[{"id":1}]` {
		t.Fatalf("pages %q; want page 1 only", pages)
	}
	var pe *paginate.Error
	if !errors.Is(err, paginate.ErrCrossHost) || !errors.As(err, &pe) || pe.Page != 2 {
		t.Fatalf("err %v; want ErrCrossHost on page 2", err)
	}
	host := strings.TrimPrefix(metadata.URL, "http://")
	if pe.Host != host || !strings.Contains(err.Error(), "redirected") || !strings.Contains(err.Error(), host) {
		t.Errorf("error %q does not name the redirect and its host %s", err, host)
	}
	if got := metadata.requests(); len(got) != 0 {
		t.Fatalf("the foreign host received %q", got)
	}
}

// The first page too: a walk is not a way to reach a host by a redirect.
func TestWalkRefusesRedirectOnFirstPage(t *testing.T) {
	foreign := newServer(t, false, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `[]`) })
	api := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, foreign.URL+"/", http.StatusTemporaryRedirect)
	})
	pages, err := walkAll(t, api.client(t), api.URL+"/items", paginate.Options{})
	if len(pages) != 0 || !errors.Is(err, paginate.ErrCrossHost) {
		t.Fatalf("pages %q, err %v", pages, err)
	}
	if len(foreign.requests()) != 0 {
		t.Fatal("the foreign host was reached")
	}
}

// Redirects on the allowed host are followed; a host added to AllowedHosts
// or named as CanonicalHost may be reached by one as by a link.
func TestWalkFollowsAllowedRedirects(t *testing.T) {
	other := newServer(t, false, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `[{"id":3}]`) })
	api := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/items":
			w.Header().Set("Link", `</moved>; rel="next"`)
			fmt.Fprint(w, `[{"id":1}]`)
		case "/moved":
			http.Redirect(w, r, "/page2", http.StatusMovedPermanently)
		case "/page2":
			w.Header().Set("Link", `</away>; rel="next"`)
			fmt.Fprint(w, `[{"id":2}]`)
		case "/away":
			http.Redirect(w, r, other.URL+"/last", http.StatusFound)
		}
	})
	otherHost := strings.TrimPrefix(other.URL, "http://")
	apiHost := strings.TrimPrefix(api.URL, "http://")
	pages, err := walkAll(t, api.client(t), api.URL+"/items", paginate.Options{AllowedHosts: []string{apiHost, otherHost}})
	if err != nil || strings.Join(pages, "") != `[{"id":1}][{"id":2}][{"id":3}]` {
		t.Fatalf("pages %q, err %v", pages, err)
	}
}

// A redirect from https down to http is refused even on the same host and
// port, and a redirect to another scheme is refused by the policy, not by
// the transport.
func TestWalkRefusesRedirectDowngradeAndScheme(t *testing.T) {
	var api *server
	api = newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/items":
			w.Header().Set("Link", `</down>; rel="next"`)
			fmt.Fprint(w, `[{"id":1}]`)
		case "/down":
			http.Redirect(w, r, strings.Replace(api.URL, "https:", "http:", 1)+"/plain", http.StatusFound)
		case "/ftp":
			http.Redirect(w, r, "ftp://"+r.Host+"/x", http.StatusFound)
		}
	})
	_, err := walkAll(t, api.client(t), api.URL+"/items", paginate.Options{})
	if !errors.Is(err, paginate.ErrDowngrade) {
		t.Fatalf("downgrade: %v", err)
	}
	_, err = walkAll(t, api.client(t), api.URL+"/ftp", paginate.Options{})
	if !errors.Is(err, paginate.ErrScheme) {
		t.Fatalf("scheme: %v", err)
	}
}

// A client's own CheckRedirect still has its say after the policy.
func TestWalkKeepsClientCheckRedirect(t *testing.T) {
	api := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/items" {
			http.Redirect(w, r, "/there", http.StatusFound)
			return
		}
		fmt.Fprint(w, `[]`)
	})
	client := api.client(t)
	called := 0
	client.CheckRedirect = func(*http.Request, []*http.Request) error {
		called++
		return http.ErrUseLastResponse
	}
	_, err := walkAll(t, client, api.URL+"/items", paginate.Options{})
	var pe *paginate.Error
	if called != 1 || !errors.As(err, &pe) || pe.Status != http.StatusFound {
		t.Fatalf("CheckRedirect called %d times, err %v; want the 302 as the client decided", called, err)
	}
}

// A transport that follows redirects itself hands back a response whose
// Request is the foreign one: the walk checks the final URL too.
func TestWalkRefusesForeignFinalURL(t *testing.T) {
	foreign, _ := url.Parse("http://169.254.169.254/latest/meta-data/")
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		req := r.Clone(r.Context())
		req.URL = foreign
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: req,
			Body: io.NopCloser(strings.NewReader(`[{"secret":1}]`))}, nil
	})}
	pages, err := walkAll(t, client, "https://api.example.gov/items", paginate.Options{})
	if len(pages) != 0 || !errors.Is(err, paginate.ErrCrossHost) || !strings.Contains(err.Error(), "169.254.169.254") {
		t.Fatalf("pages %q, err %v", pages, err)
	}
}

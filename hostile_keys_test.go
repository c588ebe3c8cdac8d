package steady_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

// The key's hostile cases (issue 10, items 1 to 5 and 7; docs/reliability.md,
// "Hostile input catalogue"): a server that echoes the key, a redirect to
// another origin, credentials given by hand. The wire check of
// internal/wiretest runs after each: no request to an origin that does not
// accept the key may carry it anywhere, and no text may hold it.

const echoKey = "KEY-ech0-7f3a9-never-foreign"

// echoWorld is an API that echoes the key into its redirects and next
// links, under names off the credential list, and a foreign host that
// records what reaches it.
type echoWorld struct {
	api, foreign *hostileServer
	w            *wiretest.Watch
}

func newEchoWorld(t *testing.T) *echoWorld {
	t.Helper()
	e := &echoWorld{w: wiretest.For(t)}
	e.foreign = newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `[{"id":9}]`)
	})
	foreign := "http://" + e.foreign.Listener.Addr().String()
	e.api = newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-Api-Key") + r.URL.Query().Get("api_key")
		switch r.URL.Path {
		case "/echo-then-away":
			// A careless API puts the key it got into the Location, then
			// the next hop leaves for another host: net/http sends the
			// previous URL, key and all, as Referer.
			http.Redirect(w, r, "/away?appid="+url.QueryEscape(got), http.StatusFound)
		case "/away":
			http.Redirect(w, r, foreign+"/landing", http.StatusFound)
		case "/echo-into-foreign":
			// The key echoed straight into another host's URL.
			http.Redirect(w, r, foreign+"/landing?hapikey="+url.QueryEscape(got), http.StatusFound)
		default:
			io.WriteString(w, `[{"id":1}]`)
		}
	})
	return e
}

func (e *echoWorld) client(t *testing.T, k credentials.Key) *steady.Client {
	t.Helper()
	k.Value = echoKey
	k.Hosts = []string{"http://" + e.api.Listener.Addr().String()}
	return newClient(t, steady.Options{BaseURL: e.api.URL, Keys: []credentials.Key{k}, Policy: fast(), Reporter: e.w.Reporter(nil)})
}

var keyPlaces = []struct {
	name string
	key  credentials.Key
}{
	{"header", credentials.Key{Header: "X-Api-Key"}},
	{"query", credentials.Key{Query: "api_key"}},
}

func TestHostileKeyRefererAfterAnEchoedRedirect(t *testing.T) {
	for _, kp := range keyPlaces {
		t.Run(kp.name, func(t *testing.T) {
			e := newEchoWorld(t)
			cl := e.client(t, kp.key)
			err := cl.GetJSON(context.Background(), "/echo-then-away", nil, new(any))
			e.w.Err("GetJSON", err)
			if err != nil {
				t.Fatalf("GetJSON: %v", err)
			}
			if e.foreign.hits("/landing") != 1 {
				t.Fatalf("the foreign host was reached %d times, want once: the case tests nothing", e.foreign.hits("/landing"))
			}
		})
	}
}

func TestHostileKeyEchoedIntoAForeignURL(t *testing.T) {
	for _, kp := range keyPlaces {
		t.Run(kp.name, func(t *testing.T) {
			e := newEchoWorld(t)
			cl := e.client(t, kp.key)
			err := cl.GetJSON(context.Background(), "/echo-into-foreign", nil, new(any))
			e.w.Err("GetJSON", err)
			if err != nil {
				t.Fatalf("GetJSON: %v", err)
			}
			if e.foreign.hits("/landing") != 1 {
				t.Fatalf("the foreign host was reached %d times, want once", e.foreign.hits("/landing"))
			}
		})
	}
}

// TestHostileKeyHandSetHeadersStayHome: credentials set by hand, without
// Options.Keys, on a request the server redirects to another host with the
// value echoed into the Location.
func TestHostileKeyHandSetHeadersStayHome(t *testing.T) {
	for _, h := range []string{"X-Api-Key", "Authorization", "X-Auth-Token", "Cookie", "Proxy-Authorization"} {
		t.Run(h, func(t *testing.T) {
			e := newEchoWorld(t)
			// No Options.Keys: the credential is given by hand, to the
			// first request's origin only.
			e.w.Key(credentials.Key{Header: h, Value: echoKey, Hosts: []string{"http://" + e.api.Listener.Addr().String()}})
			cl := newClient(t, steady.Options{Policy: fast()})
			req, err := http.NewRequest(http.MethodGet, e.api.URL+"/echo-into-foreign", nil)
			if err != nil {
				t.Fatal(err)
			}
			v := echoKey
			if h == "Authorization" {
				v = "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+echoKey))
			}
			req.Header.Set(h, v)
			resp, err := cl.Do(req)
			e.w.Err("Do", err)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if e.foreign.hits("/landing") != 1 {
				t.Fatalf("the foreign host was reached %d times, want once", e.foreign.hits("/landing"))
			}
			if strings.Contains(resp.Request.URL.String(), echoKey) {
				t.Errorf("resp.Request.URL %s carries the key", resp.Request.URL)
			}
		})
	}
}

// rawResponse answers with the bytes given, as a broken or hostile server
// writes them.
func rawResponse(w http.ResponseWriter, raw string) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	buf.WriteString(raw)
	buf.Flush()
	conn.Close()
}

const terminalAttack = "\x1b]0;pwned\x07\x1b[2J"

func TestHostileKeyServerTextIsEscaped(t *testing.T) {
	s := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/reason":
			rawResponse(w, "HTTP/1.1 404 "+terminalAttack+"\r\nX-Request-Id: id\u202e\r\nContent-Length: 12\r\nConnection: close\r\n\r\nbody\x1b[2Jmore")
		case "/limited":
			rawResponse(w, "HTTP/1.1 429 "+terminalAttack+"\r\nRetry-After: 99999\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		}
	})
	w := wiretest.For(t)
	var events hostileEvents
	cl := newClient(t, steady.Options{BaseURL: s.URL, Policy: fast(), Reporter: w.Reporter(&events)})
	for _, path := range []string{"/reason", "/limited"} {
		err := cl.GetJSON(context.Background(), path, nil, new(any))
		var se *steady.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("%s: %v, want a *StatusError", path, err)
		}
		for name, text := range map[string]string{"Error()": err.Error(), "Status": se.Status, "Excerpt": se.Excerpt, "RequestID": se.RequestID} {
			if strings.ContainsAny(text, "\x1b\x07\u202e") {
				t.Errorf("%s: %s holds a raw control character: %q", path, name, text)
			}
		}
		if !strings.Contains(err.Error(), `\x1b]0;pwned\a`) {
			t.Errorf("%s: %q does not show the escaped reason", path, err)
		}
	}
	for _, e := range events.kind(0) {
		if strings.ContainsAny(fmt.Sprintf("%+v", e), "\x1b\x07") {
			t.Errorf("event %+v holds a raw control character", e)
		}
	}
}

func TestHostileKeyOffTheListIsRedactedByValue(t *testing.T) {
	// The key, configured as a header, comes back from the server in
	// parameters whose names are not on the credential list: in a
	// redirect, in the final URL of an error and of a decode failure.
	w := wiretest.For(t)
	s := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		got := url.QueryEscape(r.Header.Get("X-Api-Key"))
		switch r.URL.Path {
		case "/to-error":
			http.Redirect(w, r, "/error?appid="+got+"&subscription="+got, http.StatusFound)
		case "/to-html":
			http.Redirect(w, r, "/html?hapikey="+got, http.StatusFound)
		case "/error":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, "you sent "+r.URL.RawQuery)
		case "/html":
			io.WriteString(w, "<html>")
		case "/bad-location":
			w.Header().Set("Location", "/x?appid="+got+"&bad=%zz")
			w.WriteHeader(http.StatusFound)
		}
	})
	k := credentials.Key{Header: "X-Api-Key", Value: echoKey, Hosts: []string{"http://" + s.Listener.Addr().String()}}
	cl := newClient(t, steady.Options{BaseURL: s.URL, Keys: []credentials.Key{k}, Policy: fast(), Reporter: w.Reporter(nil)})
	for _, path := range []string{"/to-error", "/to-html", "/bad-location"} {
		err := cl.GetJSON(context.Background(), path, nil, new(any))
		if err == nil {
			t.Fatalf("%s: no error", path)
		}
		w.Err("GetJSON "+path, err)
	}
	// A path that does not parse, with the key in it.
	w.Err("GetJSON unparsable", cl.GetJSON(context.Background(), "/x?appid="+echoKey+"%zz", nil, new(any)))
}

func TestHostileKeyNeverInResponseRequestOrPageURL(t *testing.T) {
	// A caller's own layer at the bottom of the stack that clones every
	// request, as a User-Agent setter or a tracing wrapper does, must not
	// make the attached key visible in resp.Request.URL or Page.URL.
	s := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "" {
			// The next link echoes the key, under a name off the list.
			w.Header().Set("Link", `</items?page=2&appid=`+url.QueryEscape(r.URL.Query().Get("api_key"))+`>; rel="next"`)
		}
		io.WriteString(w, `[{"id":1}]`)
	})
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	cloning := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return base.RoundTrip(r.Clone(r.Context()))
	})
	k := credentials.Key{Query: "api_key", Value: echoKey, Hosts: []string{"http://" + s.Listener.Addr().String()}}
	cl := newClient(t, steady.Options{BaseURL: s.URL, Keys: []credentials.Key{k}, Policy: fast(), Transport: cloning})

	req, _ := http.NewRequest(http.MethodGet, s.URL+"/items", nil)
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if strings.Contains(resp.Request.URL.String(), echoKey) {
		t.Errorf("resp.Request.URL = %s carries the key", resp.Request.URL)
	}
	pages, err := hostileWalk(t, cl.Pages(context.Background(), "/items", nil, paginate.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 {
		t.Fatalf("%d pages, want 2", len(pages))
	}
	for _, p := range pages {
		if strings.Contains(p.URL.String(), echoKey) || p.Next != nil && strings.Contains(p.Next.String(), echoKey) {
			t.Errorf("page %d: URL %s, Next %v: carries the key", p.Number, p.URL, p.Next)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestHostileKeyBodyRedirectedToAForeignHost(t *testing.T) {
	// A POST whose body holds the key (a form login, say), answered with a
	// 307 to another host: net/http re-sends the body there.
	e := newEchoWorld(t)
	s := newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, e.foreign.URL+"/landing", http.StatusTemporaryRedirect)
	})
	k := credentials.Key{Header: "X-Api-Key", Value: echoKey, Hosts: []string{"http://" + s.Listener.Addr().String()}}
	cl := newClient(t, steady.Options{Keys: []credentials.Key{k}, Policy: fast(), Reporter: e.w.Reporter(nil)})
	body := strings.Repeat("x", 10000) + "&key=" + echoKey
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/login", strings.NewReader(body))
	req.Header.Set("Idempotency-Key", "one")
	_, err := cl.Do(req)
	e.w.Err("Do", err)
	var le *credentials.LeakError
	if !errors.As(err, &le) {
		t.Fatalf("err %v, want a *credentials.LeakError", err)
	}
	var re *retry.Error
	if errors.As(err, &re) && re.Attempts > 1 {
		t.Errorf("the refusal was re-sent: %d attempts", re.Attempts)
	}
}

// recordingTracer is a event.Tracer that keeps the events it was told
// about when attempts started.
type recordingTracer struct {
	hostileEvents
	started hostileEvents
}

func (r *recordingTracer) StartAttempt(e event.Event) context.Context {
	r.started.Report(e)
	return nil
}

func TestHostileKeyRedactionKeepsTheTracer(t *testing.T) {
	// The client's redacting wrapper must stay a event.Tracer, and what
	// it tells the tracer is redacted too.
	e := newEchoWorld(t)
	var tr recordingTracer
	cl := newClient(t, steady.Options{BaseURL: e.api.URL, Policy: fast(), Reporter: &tr,
		Keys: []credentials.Key{{Query: "api_key", Value: echoKey, Hosts: []string{"http://" + e.api.Listener.Addr().String()}}}})
	if err := cl.GetJSON(context.Background(), "/echo-then-away", nil, new(any)); err != nil {
		t.Fatal(err)
	}
	started := tr.started.kind(0)
	if len(started) != 3 {
		t.Fatalf("the tracer saw %d attempts start, want 3 (one per hop)", len(started))
	}
	for _, ev := range started {
		e.w.Text("StartAttempt", fmt.Sprintf("%+v", ev))
	}
}

package steady_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

// The suite-wide key-leak test of issue 3 (ARCHITECTURE decision 11): a key
// configured as a credentials.Key, and planted wherever a careless client
// would let it out (a request URL's query, userinfo, next links, redirect
// Locations, server echoes), must appear in no error text, no event and no
// rendered or logged line, whatever the outcome of the request.

const (
	leakKey = "KEY-5ec4e7-do-not-leak"
	// leakControl travels in a parameter that is not a credential, through
	// the same requests, so it must show up: proof that the texts searched
	// are the ones that name the requests.
	leakControl = "CONTROL-5ec4e7-in-plain-sight"
)

// leakForms are the encodings of the key a text could carry it in.
var leakForms = []string{
	leakKey,
	url.QueryEscape(leakKey),
	base64.StdEncoding.EncodeToString([]byte("user:" + leakKey)), // userinfo sent as Basic auth
}

// leakText is one text the battery produced, and where it came from.
type leakText struct{ where, text string }

// leakLog collects every text a scenario produced.
type leakLog struct {
	mu    sync.Mutex
	texts []leakText
}

func (l *leakLog) add(where, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.texts = append(l.texts, leakText{where, text})
}

// addErr records err as a caller could print it (see wiretest.ErrTexts).
func (l *leakLog) addErr(where string, err error) { wiretest.ErrTexts(where, err, l.add) }

// find returns the texts that contain any of needles.
func (l *leakLog) find(needles ...string) []leakText {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []leakText
	for _, t := range l.texts {
		for _, n := range needles {
			if strings.Contains(t.text, n) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// leakAPI is the server the key belongs to. Every answer that can echoes
// what it received, key included, as careless servers do in error bodies.
type leakAPI struct {
	api, foreign *hostileServer
	sawKey       atomic.Int64 // requests that carried the key, in either form
	flaky        atomic.Int64
}

// received is what the server was sent that could hold the key.
func received(r *http.Request) string {
	return fmt.Sprintf("query=%s x-api-key=%s authorization=%s",
		r.URL.RawQuery, r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
}

func newLeakAPI(t *testing.T) *leakAPI {
	a := &leakAPI{}
	a.foreign = newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "foreign host saw "+received(r))
	})
	foreign := "http://" + a.foreign.Listener.Addr().String()
	a.api = newHostileServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") == leakKey || r.URL.Query().Get("api_key") == leakKey {
			a.sawKey.Add(1)
		}
		self := "http://" + r.Host
		next := func(link string) { w.Header().Set("Link", "<"+link+`>; rel="next"`) }
		page := r.URL.Query().Get("page")
		switch r.URL.Path {
		case "/ok":
			io.WriteString(w, `[{"id":1}]`)
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "no such thing; you sent "+received(r))
		case "/denied":
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "bad key; you sent "+received(r))
		case "/flaky":
			if a.flaky.Add(1)%3 != 0 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, "busy; you sent "+received(r))
				return
			}
			io.WriteString(w, `[{"id":1}]`)
		case "/down":
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "down; you sent "+received(r))
		case "/limited":
			w.Header().Set("Retry-After", "3600")
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, "slow down; you sent "+received(r))
		case "/notjson":
			io.WriteString(w, "<html>you sent "+received(r)+"</html>")
		case "/reset":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}
		case "/badheader":
			// A broken server that writes what it was sent into a header.
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err == nil {
				echo := r.Header.Get("X-Api-Key") + r.URL.Query().Get("api_key")
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %s\r\n\r\n", echo)
				buf.Flush()
				conn.Close()
			}
		case "/hang":
			<-r.Context().Done()
		case "/endless":
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, strings.Repeat(`{"id":1},`, 1000)); err != nil {
					return
				}
			}
		case "/redirect-home":
			http.Redirect(w, r, "/ok?api_key="+leakKey+"&token="+leakKey+"&q="+leakControl, http.StatusFound)
		case "/redirect-away":
			http.Redirect(w, r, foreign+"/landing?api_key="+leakKey+"&q="+leakControl, http.StatusFound)
		case "/redirect-userinfo":
			http.Redirect(w, r, "http://user:"+leakKey+"@"+a.foreign.Listener.Addr().String()+"/landing?q="+leakControl, http.StatusTemporaryRedirect)
		case "/redirect-loop":
			http.Redirect(w, r, "/redirect-loop?api_key="+leakKey+"&q="+leakControl+"&n="+strconv.Itoa(len(r.URL.RawQuery)), http.StatusFound)
		case "/pages":
			// Page 1 links with the key in the query, page 2 with it in the
			// userinfo and a token, page 3 to another host.
			switch page {
			case "":
				next("/pages?page=2&api_key=" + leakKey + "&q=" + leakControl)
			case "2":
				next("http://user:" + leakKey + "@" + r.Host + "/pages?page=3&token=" + leakKey + "&q=" + leakControl)
			case "3":
				next(foreign + "/pages?page=4&api_key=" + leakKey + "&q=" + leakControl)
			}
			io.WriteString(w, `[{"id":1}]`)
		case "/pages-to":
			// Page 1 links to the path named by ?to, with the key in the link.
			if page == "" {
				next(self + "/" + r.URL.Query().Get("to") + "?page=2&api_key=" + leakKey + "&q=" + leakControl)
			}
			io.WriteString(w, `[{"id":1}]`)
		case "/pages-loop":
			next("/pages-loop?page=2&api_key=" + leakKey + "&q=" + leakControl)
			io.WriteString(w, `[{"id":1}]`)
		default:
			http.NotFound(w, r)
		}
	})
	return a
}

// leakBattery runs every scenario through cl and records what came out.
func leakBattery(t *testing.T, a *leakAPI, cl *steady.Client, log *leakLog) {
	ctx := context.Background()
	apiUser := "http://user:" + leakKey + "@" + a.api.Listener.Addr().String()
	closed := closedPort(t)
	careless := "?api_key=" + leakKey + "&token=" + leakKey + "&q=" + leakControl

	getJSON := func(name, path string, query url.Values) {
		log.addErr("GetJSON "+name, cl.GetJSON(ctx, path, query, new(any)))
	}
	do := func(name, rawURL string) {
		req, err := http.NewRequest(http.MethodGet, rawURL, nil)
		if err != nil {
			log.addErr("NewRequest "+name, err)
			return
		}
		resp, err := cl.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		log.addErr("Do "+name, err)
	}
	walk := func(name, path string, opt paginate.Options) {
		w, err := cl.Walk(path, url.Values{"q": {leakControl}}, opt)
		if err != nil {
			log.addErr("Walk "+name, err)
			return
		}
		for _, err := range w.All(ctx) {
			log.addErr("walk "+name, err)
		}
	}

	// Successes, with the key in the URL as well as configured.
	getJSON("success", "/ok", url.Values{"q": {leakControl}})
	getJSON("success, key in the path's query", "/ok"+careless, nil)
	do("success, key in userinfo", apiUser+"/ok"+careless)
	getJSON("success after redirect home", "/redirect-home", nil)

	// Status errors, whose bodies echo the key.
	for _, path := range []string{"/missing", "/denied", "/down", "/limited", "/flaky"} {
		getJSON("status "+path, path+careless, nil)
		do("status "+path+", userinfo", apiUser+path+careless)
	}
	getJSON("redirect to another host", "/redirect-away", nil)
	getJSON("redirect with userinfo", "/redirect-userinfo", nil)
	getJSON("redirect loop", "/redirect-loop", nil)
	getJSON("not JSON", "/notjson"+careless, nil)

	// The one safe way is enforced: a key passed as a free-form parameter.
	getJSON("credential parameter", "/ok", url.Values{"api_key": {leakKey}, "q": {leakControl}})

	// Transport failures.
	getJSON("reset", "/reset"+careless, nil)
	getJSON("server echoes into a header", "/badheader"+careless, nil)
	do("refused", "http://127.0.0.1:"+closed+"/x"+careless)
	do("refused, userinfo", "http://user:"+leakKey+"@127.0.0.1:"+closed+"/x"+careless)
	// Not cl.With: it panics on a Reporter of a func type
	// (TestLeakClientWithFuncReporter).
	oneOpt := cl.Options()
	oneOpt.Policy.MaxAttempts = 1
	once := newClient(t, oneOpt)
	hctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond) // ends a request the server never answers
	log.addErr("GetJSON deadline", once.GetJSON(hctx, "/hang"+careless, nil, new(any)))
	cancel()

	// Page walks and their errors.
	walk("links with the key, then cross-host", "/pages", paginate.Options{})
	walk("loop", "/pages-loop", paginate.Options{})
	for _, to := range []string{"denied", "down", "notjson", "reset", "badheader", "redirect-away", "redirect-loop"} {
		walk("to "+to, "/pages-to?to="+to, paginate.Options{})
	}
	walk("endless page", "/pages-to?to=endless", paginate.Options{MaxPageBytes: 64 << 10})
	walk("cursor named like a key", "/ok", paginate.Options{Next: paginate.Cursor("next", "api_key")})

	// A key misconfigured at construction.
	_, err := steady.New(steady.Options{Keys: []credentials.Key{{Header: "X-Api-Key", Value: leakKey, Hosts: []string{"http://api.example.gov"}}}})
	log.addErr("New with a bad key", err)
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

func TestLeakKeyNeverInErrorsEventsOrLogs(t *testing.T) {
	forms := []struct {
		name string
		key  func(host string) credentials.Key
	}{
		{"header", func(host string) credentials.Key {
			return credentials.Key{Header: "X-Api-Key", Value: leakKey, Hosts: []string{host}}
		}},
		{"query", func(host string) credentials.Key {
			return credentials.Key{Query: "api_key", Value: leakKey, Hosts: []string{host}}
		}},
	}
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			a := newLeakAPI(t)
			var (
				log         leakLog
				events      hostileEvents
				slogText, j bytes.Buffer
			)
			logger := slog.New(slog.NewTextHandler(&slogText, &slog.HandlerOptions{Level: slog.LevelDebug}))
			jsonLogger := slog.New(slog.NewJSONHandler(&j, &slog.HandlerOptions{Level: slog.LevelDebug}))
			opt := steady.Options{
				BaseURL:               a.api.URL,
				Keys:                  []credentials.Key{form.key("http://" + a.api.Listener.Addr().String())},
				Policy:                retry.Policy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond},
				Reporter:              event.Multi(&events, event.Slog(logger), event.Slog(jsonLogger)),
				ResponseHeaderTimeout: 5 * time.Second,
			}
			cl := newClient(t, opt)
			log.add("Options %+v", fmt.Sprintf("%+v", cl.Options()))
			log.add("Options %#v", fmt.Sprintf("%#v", cl.Options()))

			leakBattery(t, a, cl, &log)

			all := events.kind(0)
			for i, e := range all {
				log.add("event "+strconv.Itoa(i)+" "+e.Kind.String(), fmt.Sprintf("%+v", e))
			}
			log.add("slog text", slogText.String())
			log.add("slog JSON", j.String())

			// The battery did what it says: the key was sent, and every
			// channel carried the requests' URLs.
			if a.sawKey.Load() == 0 {
				t.Fatal("the server never received the key: the battery tests nothing")
			}
			if len(all) < 50 {
				t.Fatalf("only %d events: the reporter is not wired", len(all))
			}
			for _, where := range []string{"GetJSON status /missing", "event", "walk to denied", "slog text", "slog JSON"} {
				found := false
				for _, lt := range log.find(leakControl) {
					if strings.HasPrefix(lt.where, where) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("the control string is missing from %s: the search would miss a leak there", where)
				}
			}

			for _, lt := range log.find(leakForms...) {
				t.Errorf("%s leaks the key:\n%s", lt.where, excerptAround(lt.text, leakForms))
			}
			// The same texts through the suite-wide check, which looks for
			// every base64 run and escaping of the key as well.
			w := wiretest.For(t)
			for _, lt := range log.texts {
				w.Text(lt.where, lt.text)
			}
		})
	}
}

// excerptAround shows the part of text around the first needle found.
func excerptAround(text string, needles []string) string {
	for _, n := range needles {
		if i := strings.Index(text, n); i >= 0 {
			from, to := max(0, i-160), min(len(text), i+len(n)+80)
			return "..." + text[from:to] + "..."
		}
	}
	return text
}

func TestLeakSearchCanFail(t *testing.T) {
	// The search must find the key wherever it is planted, in each of the
	// forms it looks for, and in errors reached only through the chain.
	var log leakLog
	log.add("plain", "a line with "+leakKey+" in it")
	log.add("escaped", "https://x.example/?k="+url.QueryEscape("user:"+leakKey))
	log.add("basic", "Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("user:"+leakKey)))
	log.addErr("wrapped", fmt.Errorf("outer: %w", errors.Join(errors.New("clean"), &url.Error{Op: "Get", URL: "https://x.example/?api_key=" + leakKey, Err: io.EOF})))
	log.add("clean", "nothing here but "+leakControl)
	got := map[string]bool{}
	for _, lt := range log.find(leakForms...) {
		got[strings.Fields(lt.where)[0]] = true
	}
	for _, want := range []string{"plain", "escaped", "basic", "wrapped"} {
		if !got[want] {
			t.Errorf("the search missed the key planted in %q", want)
		}
	}
	if got["clean"] {
		t.Error("the search reports a key where there is none")
	}
}

func TestLeakClientWithFuncReporter(t *testing.T) {
	// Client.With compares Options.Reporter with Policy.Reporter using ==,
	// which panics when the reporter's dynamic type is not comparable: a
	// event.ReporterFunc, or the event.Multi that joins a renderer
	// and a logger. Found by the battery above, which reports to four.
	var n atomic.Int64
	for name, r := range map[string]event.Reporter{
		"ReporterFunc": event.ReporterFunc(func(event.Event) { n.Add(1) }),
		"Multi":        event.Multi(&hostileEvents{}, event.ReporterFunc(func(event.Event) { n.Add(1) })),
	} {
		t.Run(name, func(t *testing.T) {
			cl := newClient(t, steady.Options{Reporter: r})
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("With panicked: %v", p)
				}
			}()
			if err := cl.With(func(o *steady.Options) { o.Policy.MaxAttempts = 1 }).Err(); err != nil {
				t.Errorf("With: %v", err)
			}
		})
	}
}

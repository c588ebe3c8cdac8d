package wiretest_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(wiretest.Main(m)) }

const key = "wire-5ec4e7-planted"

// plant sends one request to a watched server with the key wherever the
// case puts it, and returns what the watch found.
func plant(t *testing.T, accepted bool, edit func(r *http.Request)) []wiretest.Leak {
	t.Helper()
	var w *wiretest.Watch
	var findings []wiretest.Leak
	// A subtest of its own, so that the findings are read, not reported.
	t.Run("send", func(t *testing.T) {
		w = wiretest.For(t)
		s := w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { io.WriteString(rw, "ok") }))
		host := "http://127.0.0.1:1"
		if accepted {
			host = "http://" + s.Listener.Addr().String()
		}
		w.Key(credentials.Key{Header: "X-Api-Key", Value: key, Hosts: []string{host}})
		req, err := http.NewRequest(http.MethodPost, s.URL+"/x?q=1", strings.NewReader("clean body"))
		if err != nil {
			t.Fatal(err)
		}
		edit(req)
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		findings = w.Findings()
		// Found leaks are this test's subject, not a failure of it.
		w.Forget()
	})
	return findings
}

func TestWatchCatchesAPlantedLeak(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		name, where string
		edit        func(r *http.Request)
	}{
		{"Referer", "header Referer", func(r *http.Request) { r.Header.Set("Referer", "https://api.example/p?api_key="+key) }},
		{"Referer escaped", "header Referer", func(r *http.Request) { r.Header.Set("Referer", "https://api.example/p?k="+url.QueryEscape("a b/"+key)) }},
		{"key header", "header X-Api-Key", func(r *http.Request) { r.Header.Set("X-Api-Key", key) }},
		{"Basic", "header Authorization", func(r *http.Request) { r.Header.Set("Authorization", "Basic "+b64("user:"+key)) }},
		{"query under an innocent name", "request line", func(r *http.Request) { r.URL.RawQuery = "appid=" + key }},
		{"path", "request line", func(r *http.Request) { r.URL.Path = "/v1/" + key + "/items" }},
		{"body", "body", func(r *http.Request) {
			r.Body = io.NopCloser(strings.NewReader(`{"k":"` + key + `"}`))
			r.ContentLength = int64(len(`{"k":"` + key + `"}`))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			found := plant(t, false, c.edit)
			if len(found) != 1 || !strings.Contains(found[0].Where, c.where) {
				t.Fatalf("findings %+v, want one in %s", found, c.where)
			}
			if strings.Contains(found[0].Text, key) || !strings.Contains(found[0].Text, "«KEY»") {
				t.Errorf("the finding shows %q; want the key marked, not printed", found[0].Text)
			}
			// The same request to the origin that accepts the key is fine.
			if found := plant(t, true, c.edit); len(found) != 0 {
				t.Errorf("findings %+v for the origin that accepts the key", found)
			}
		})
	}
	if found := plant(t, false, func(*http.Request) {}); len(found) != 0 {
		t.Errorf("findings %+v for a clean request", found)
	}
}

func TestWatchCatchesASecretInAText(t *testing.T) {
	var found []wiretest.Leak
	t.Run("texts", func(t *testing.T) {
		w := wiretest.For(t)
		w.Secret(key)
		w.Text("clean", "nothing here")
		w.Err("wrapped", fmt.Errorf("outer: %w", errors.Join(errors.New("clean"), &url.Error{Op: "Get", URL: "https://x.example/?appid=" + key, Err: io.EOF})))
		fmt.Fprintf(w.Writer("stderr"), "progress: %s\n", url.QueryEscape(key))
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"url":"https://x.example/?hapikey=`+key+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		w.Dir(dir)
		w.Reporter(nil).Report(progressEvent(key))
		found = w.Findings()
		w.Forget()
	})
	got := map[string]bool{}
	for _, l := range found {
		got[strings.Fields(l.Where)[0]] = true
	}
	for _, want := range []string{"wrapped", "stderr", "file", "event"} {
		if !got[want] {
			t.Errorf("the watch missed the secret planted in %s; found %+v", want, found)
		}
	}
	if got["clean"] {
		t.Error("the watch reports a secret where there is none")
	}
}

// TestWatchCatchesNetHTTPRefererLeak is the leak of issue 10, item 1, as
// net/http makes it without steady's credentials layer: a server echoes
// the key into a same-host Location, the next hop leaves for another host,
// and net/http sends the previous URL as Referer. The watch must see it.
func TestWatchCatchesNetHTTPRefererLeak(t *testing.T) {
	var found []wiretest.Leak
	t.Run("plain net/http", func(t *testing.T) {
		w := wiretest.For(t)
		foreign := w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { io.WriteString(rw, "landed") }))
		api := w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/start":
				http.Redirect(rw, r, "/away?appid="+url.QueryEscape(r.Header.Get("X-Api-Key")), http.StatusFound)
			default:
				http.Redirect(rw, r, foreign.URL+"/landing", http.StatusFound)
			}
		}))
		w.Key(credentials.Key{Header: "X-Api-Key", Value: key, Hosts: []string{"http://" + api.Listener.Addr().String()}})
		req, _ := http.NewRequest(http.MethodGet, api.URL+"/start", nil)
		req.Header.Set("X-Api-Key", key)
		// Only to the first host, as a careful caller would think.
		client := &http.Client{CheckRedirect: func(r *http.Request, via []*http.Request) error {
			r.Header.Del("X-Api-Key")
			return nil
		}}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		client.CloseIdleConnections()
		found = w.Findings()
		w.Forget()
	})
	if len(found) != 1 || !strings.Contains(found[0].Where, "/landing") || !strings.Contains(found[0].Where, "header Referer") {
		t.Fatalf("findings %+v, want the Referer of the request to the foreign host", found)
	}
}

// reservedKey has characters every escape set treats differently.
const reservedKey = "wire+5e/c4=e7:p@l!a*n'(t)e~d k$y&;,"

// The watch finds a key in every common escape set, in the path of a
// request to an origin that does not accept it and in a text.
func TestWatchCatchesEveryEncoding(t *testing.T) {
	for name, form := range wiretest.Forms(reservedKey) {
		t.Run(name, func(t *testing.T) {
			var found []wiretest.Leak
			t.Run("send", func(t *testing.T) {
				w := wiretest.For(t)
				s := w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {}))
				w.Key(credentials.Key{Header: "X-Api-Key", Value: reservedKey, Hosts: []string{"http://127.0.0.1:1"}})
				req, err := http.NewRequest(http.MethodGet, s.URL, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.URL.Opaque = "/landing/" + form + "/next"
				resp, err := s.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				w.Text("state file", `{"next":"https://x.example/landing/`+form+`"}`)
				found = w.Findings()
				w.Forget()
			})
			if len(found) != 2 || !strings.Contains(found[0].Where, "request line") || found[1].Where != "state file" {
				t.Errorf("findings %+v; want the request line and the text", found)
			}
		})
	}
}

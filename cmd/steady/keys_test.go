package main

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
)

// The command line's key cases (issue 10, items 2 and 3): credentials given
// with -H are scoped to the URL's host like STEADY_API_KEY, and no line on
// stderr nor file on disk holds a key, under whatever name a server echoes
// it.

const cliKey = "cli-k3y-5ec4e7-never-foreign"

// watchedCLI runs the program and records its output for the wire check.
func watchedCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, out, errText := cli(t, args...)
	w := wiretest.For(t)
	w.Text("stdout", out)
	w.Text("stderr", errText)
	return code, out, errText
}

func TestGetHandSetCredentialsStayOnTheirHost(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("me:"+cliKey))
	for _, h := range []struct{ name, value string }{
		{"X-Api-Key", cliKey}, {"Authorization", basic}, {"Authorization", "Bearer " + cliKey},
		{"X-Auth-Token", cliKey}, {"Cookie", "session=" + cliKey},
	} {
		t.Run(h.name+" "+strings.Fields(h.value)[0], func(t *testing.T) {
			w := wiretest.For(t)
			foreign := w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { io.WriteString(rw, "landed") }))
			var home int
			api := w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if r.Header.Get(h.name) == h.value {
					home++
				}
				// The key echoed into the Location, and a redirect away.
				http.Redirect(rw, r, foreign.URL+"/landing?appid="+url.QueryEscape(cliKey), http.StatusFound)
			}))
			w.Key(credentials.Key{Header: h.name, Value: h.value, Hosts: []string{"http://" + api.Listener.Addr().String()}})
			w.Secret(cliKey)
			code, out, errText := watchedCLI(t, "get", "-q", "-H", h.name+": "+h.value, "-H", "Accept: text/plain", api.URL+"/start")
			if code != exitOK || out != "landed" {
				t.Fatalf("exit %d, out %q, err %q", code, out, errText)
			}
			if home != 1 {
				t.Errorf("the URL's host received %s %d times, want once", h.name, home)
			}
			if reqs := w.Requests(); len(reqs) != 2 || reqs[1].Header.Get("Accept") != "text/plain" {
				t.Errorf("requests %+v: want two, the other header kept on both", reqs)
			}
		})
	}
}

func TestGetHandSetCredentialsScopedLikeTheKey(t *testing.T) {
	code, _, errText := watchedCLI(t, "get", "-q", "-H", "Authorization: Bearer "+cliKey, "http://api.example.gov/x")
	if code != exitUsage || !strings.Contains(errText, "plain http") {
		t.Fatalf("exit %d, %q; want a usage error refusing plain http", code, errText)
	}
	wiretest.For(t).Secret(cliKey)
	code, _, errText = watchedCLI(t, "get", "-q", "-H", "X-Api-Key: a", "-H", "X-Api-Key: b", "https://api.example.gov/x")
	if code != exitUsage || !strings.Contains(errText, "twice") {
		t.Fatalf("exit %d, %q; want a usage error for a credential given twice", code, errText)
	}
}

func TestHarvestEchoedKeyNeverOnDiskOrStderr(t *testing.T) {
	// The API echoes the key into every next link under a name off the
	// credential list, then fails at page 3, once for a while (a retry
	// line on stderr names the page) and then for good: the harvest stops
	// with its state file on disk.
	w := wiretest.For(t)
	var third atomic.Int64
	api := w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		switch page {
		case "", "2":
			next := "3"
			if page == "" {
				next = "2"
			}
			rw.Header().Set("Link", `</items?page=`+next+`&appid=`+url.QueryEscape(r.Header.Get("X-Api-Key"))+`>; rel="next"`)
			io.WriteString(rw, `[{"id":1},{"id":2}]`)
		default:
			if third.Add(1) == 1 {
				rw.Header().Set("Retry-After", "0")
				rw.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			rw.WriteHeader(http.StatusBadRequest)
			io.WriteString(rw, "bad page; you sent "+r.URL.RawQuery+" with "+r.Header.Get("X-Api-Key"))
		}
	}))
	w.Key(credentials.Key{Header: "X-Api-Key", Value: cliKey, Hosts: []string{"http://" + api.Listener.Addr().String()}})
	t.Setenv("STEADY_API_KEY", cliKey)
	dir := t.TempDir()
	w.Dir(dir)
	code, _, errText := watchedCLI(t, "harvest", "--retries", "1", api.URL+"/items", "-o", filepath.Join(dir, "rows.jsonl"))
	if code == exitOK {
		t.Fatalf("exit 0 for a harvest that failed at page 3: %q", errText)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.state.json")); len(files) != 1 {
		t.Errorf("state files %v, want one: the case tests nothing", files)
	}
	if !strings.Contains(errText, "400") || !strings.Contains(errText, "retry") || !strings.Contains(errText, "page=3") {
		t.Errorf("stderr %q does not show the retry of page 3 and the failure: the case tests less than it says", errText)
	}
}

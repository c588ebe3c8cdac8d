package steady_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/steadyhttp/steady"
)

// TestGetJSONAllocations holds GetJSON near the allocations of the hand loop
// (http.Client and a json.Decoder) on the same in-memory response: the
// retry layer's per-attempt state (the outcome, the read bound's timer per
// read, the buffered body) and the credentials layer's request copy cost a
// few. It guards against growth per call; what a user feels is the cost
// over loopback (BenchmarkFacadeOverLoopback). Counts, not times: they do
// not depend on how busy the machine is.
func TestGetJSONAllocations(t *testing.T) {
	mem := &memTransport{body: jsonRows(2 << 10), ct: "application/json"}
	client := &http.Client{Transport: mem}
	hand := testing.AllocsPerRun(50, func() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://api.example.gov/v1/items?limit=100", nil)
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rows []benchRow
		if err := json.NewDecoder(resp.Body).Decode(&rows); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	c, err := steady.New(steady.Options{BaseURL: "https://api.example.gov/v1/", Transport: mem})
	if err != nil {
		t.Fatal(err)
	}
	got := testing.AllocsPerRun(50, func() {
		var rows []benchRow
		if err := c.GetJSON(context.Background(), "items?limit=100", nil, &rows); err != nil {
			t.Fatal(err)
		}
	})
	if got > hand+10 {
		t.Errorf("GetJSON: %v allocations a call, the hand loop %v: more than 10 above it", got, hand)
	}
}

// TestGetJSONOneDocument: a body is one JSON value. Trailing data (a second
// value, an error page appended) is a *DecodeError at the byte where it
// starts, and an empty or blank body says so.
func TestGetJSONOneDocument(t *testing.T) {
	bodies := map[string]string{
		"/ok":       " {\"a\":1}\n\t ",
		"/two":      `{"a":1}{"a":2}`,
		"/html":     `{"a":1}<html>`,
		"/empty":    ``,
		"/blank":    " \r\n",
		"/type":     `{"a":"x"}`,
		"/truncate": `{"a":1`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, bodies[r.URL.Path])
	}))
	defer srv.Close()
	c := newClient(t, steady.Options{BaseURL: srv.URL})
	var v struct{ A int }
	if err := c.GetJSON(context.Background(), "/ok", nil, &v); err != nil || v.A != 1 {
		t.Fatalf("/ok: %v, %+v", err, v)
	}
	for _, tc := range []struct {
		path   string
		offset int64
		text   string
	}{
		{"/two", 8, "after top-level value"},
		{"/html", 8, "after top-level value"},
		{"/empty", 0, "empty body"},
		{"/blank", 0, "empty body"},
		{"/type", 8, "cannot unmarshal string"},
		{"/truncate", 6, "unexpected end"},
	} {
		err := c.GetJSON(context.Background(), tc.path, nil, &v)
		var de *steady.DecodeError
		if !errors.As(err, &de) || de.Offset != tc.offset || !strings.Contains(err.Error(), tc.text) || !strings.Contains(de.URL, tc.path) {
			t.Errorf("%s: %v, want a *DecodeError at byte %d saying %q", tc.path, err, tc.offset, tc.text)
		}
	}
}

// The user-agent layer, and Do in its own copy of the request, set the
// User-Agent on a request that has none without touching the caller's
// request or its header map, and leave one that has its own as it is.
func TestUserAgentLeavesTheCallersRequest(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("User-Agent")+"|"+r.Header.Get("X-Trace"))
		mu.Unlock()
		io.WriteString(w, "{}")
	}))
	defer srv.Close()
	c := newClient(t, steady.Options{UserAgent: "probe/1"})
	for _, send := range []func(*http.Request) (*http.Response, error){c.HTTP().Do, c.Do} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header["X-Trace"] = make([]string, 1, 4) // spare room a careless copy would write into
		req.Header["X-Trace"][0] = "t1"
		resp, err := send(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, ok := req.Header["User-Agent"]; ok || len(req.Header) != 1 || len(req.Header["X-Trace"]) != 1 {
			t.Errorf("the caller's header was modified: %v", req.Header)
		}
		if spare := req.Header["X-Trace"][:4]; spare[1] != "" || spare[2] != "" || spare[3] != "" {
			t.Errorf("a layer wrote into the spare room of the caller's header value: %q", spare)
		}
	}
	own, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	own.Header.Set("User-Agent", "mine/2")
	if resp, err := c.HTTP().Do(own); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	var v any
	if err := c.GetJSON(context.Background(), srv.URL, nil, &v); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"probe/1|t1", "probe/1|t1", "mine/2|", "probe/1|"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the server saw %q, want %q", got, want)
	}
}

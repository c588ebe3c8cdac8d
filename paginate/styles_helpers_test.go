package paginate_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/steadytest"
)

// memTransport serves a handler in memory after a latency, so that a walk
// inside a synctest bubble takes exact virtual time. A handler that aborts
// (a reset) is a transport error, and a body shorter than its
// Content-Length ends in io.ErrUnexpectedEOF, as on a cut connection. It
// counts the requests in flight.
type memTransport struct {
	h       http.Handler
	latency time.Duration

	mu            sync.Mutex
	inFlight, max int
	requests      int
}

func (m *memTransport) RoundTrip(r *http.Request) (resp *http.Response, err error) {
	m.mu.Lock()
	m.inFlight++
	m.requests++
	m.max = max(m.max, m.inFlight)
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.inFlight--
		m.mu.Unlock()
	}()
	t := time.NewTimer(m.latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	rec := httptest.NewRecorder()
	if aborted := serveRecovering(m.h, rec, r); aborted {
		return nil, errors.New("connection reset by peer")
	}
	res := rec.Result()
	res.Request = r
	body := rec.Body.Bytes()
	if n, err := strconv.Atoi(res.Header.Get("Content-Length")); err == nil && n > len(body) {
		res.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{io.ErrUnexpectedEOF}))
	}
	return res, nil
}

func serveRecovering(h http.Handler, w http.ResponseWriter, r *http.Request) (aborted bool) {
	defer func() {
		if v := recover(); v != nil {
			aborted = true
		}
	}()
	h.ServeHTTP(w, r)
	return false
}

// styleHandler is a steadytest handler of rows rows in style s.
func styleHandler(t *testing.T, s steadytest.Style, rows int, faults steadytest.Faults) *steadytest.Handler {
	t.Helper()
	h, err := steadytest.NewHandler(steadytest.ServerOptions{Rows: rows, Style: s, Faults: faults, LogLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// walkIDs walks from rawURL and returns the ids of the rows, in the order
// delivered, and the error that ended the walk.
func walkIDs(t *testing.T, client *http.Client, req *http.Request, opt paginate.Options) ([]int, *paginate.Walk, error) {
	t.Helper()
	w := paginate.NewWalk(client, req, opt)
	var got []int
	for p, err := range w.All(t.Context()) {
		if err != nil {
			return got, w, err
		}
		got = append(got, pageIDs(t, p)...)
	}
	return got, w, nil
}

// pageIDs reads the ids of a page's items, JSON rows or S3 keys.
func pageIDs(t *testing.T, p *paginate.Page) []int {
	t.Helper()
	var out []int
	for _, it := range p.Items.All() {
		if bytes.HasPrefix(it, []byte("<Contents>")) {
			var id int
			if _, err := fmt.Sscanf(string(it), "<Contents><Key>rows/%d.json</Key>", &id); err != nil {
				t.Fatalf("item %s: %v", it, err)
			}
			out = append(out, id)
			continue
		}
		rest, ok := bytes.CutPrefix(it, []byte(`{"id":`))
		end := bytes.IndexAny(rest, ",}")
		id, err := strconv.Atoi(string(rest[:max(end, 0)]))
		if !ok || err != nil {
			t.Fatalf("item %s has no id first", it)
		}
		out = append(out, id)
	}
	return out
}

// checkSequence fails unless got is exactly from..to.
func checkSequence(t *testing.T, got []int, from, to int) {
	t.Helper()
	if len(got) != to-from+1 {
		t.Fatalf("got %d rows, want %d (%d..%d)", len(got), to-from+1, from, to)
	}
	for i, id := range got {
		if id != from+i {
			t.Fatalf("row %d is id %d, want %d", i, id, from+i)
		}
	}
}

func mustRequest(t *testing.T, rawURL string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

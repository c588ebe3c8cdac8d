package retry_test

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// spentOnce answers 200 with a quota spent until reset.
func spentOnce(reset time.Duration) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		h := http.Header{"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset": {strconv.FormatInt(time.Now().Add(reset).Unix(), 10)}}
		return respond(r, 200, h, "{}"), nil
	}
}

// The zero policy paces, as the command does: after a 200 that says the
// quota is spent, the next request waits for the reset instead of drawing
// a 429 from an empty window.
func TestZeroPolicyPaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := retry.New(spentOnce(10*time.Second), retry.Policy{})
		roundTripOK(t, tr)
		start := time.Now()
		roundTripOK(t, tr)
		if d := time.Since(start); d < 9*time.Second {
			t.Errorf("the second request waited %v, want the quota's reset (about 10s)", d)
		}
	})
}

// NoPacing and a Pacer contradict each other.
func TestNoPacingWithPacerIsInvalid(t *testing.T) {
	err := retry.Policy{NoPacing: true, Pacer: new(ratelimit.Pacer)}.Validate()
	if err == nil {
		t.Fatal("Validate accepted NoPacing with a Pacer")
	}
}

func roundTripOK(t *testing.T, tr http.RoundTripper) {
	t.Helper()
	resp, err := tr.RoundTrip(get(t.Context(), "https://api.example.com/items"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// cutBody yields s, then fails as a connection lost mid-body does.
type cutBody struct {
	r    io.Reader
	read atomic.Int64
}

func newCut(s string, err error) *cutBody {
	return &cutBody{r: io.MultiReader(strings.NewReader(s), iotest.ErrReader(err))}
}

func (b *cutBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}
func (b *cutBody) Close() error { return nil }

// answer is a 200 whose body is b, of length cl (-1: unknown).
func answer(r *http.Request, b io.ReadCloser, cl int64, kv ...string) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return &http.Response{StatusCode: 200, Header: h, Body: b, ContentLength: cl, Request: r}
}

const doc = `{"items":[1,2,3,4,5,6,7,8,9,10]}`

// A small body without a validator that breaks mid-way is read inside the
// attempt by default, so the break is a failed attempt and the body is
// re-sent, even for a caller (an SDK) that reads only after RoundTrip
// returned.
func TestSmallBodyCutMidwayIsResent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []func(*http.Request) (*http.Response, error){
			func(r *http.Request) (*http.Response, error) {
				return answer(r, newCut(doc[:10], io.ErrUnexpectedEOF), int64(len(doc))), nil
			},
			func(r *http.Request) (*http.Response, error) {
				return answer(r, io.NopCloser(strings.NewReader(doc)), int64(len(doc))), nil
			},
		}}
		tr := retry.New(s, retry.Policy{Rand: constRand(0)})
		resp, err := tr.RoundTrip(get(t.Context(), "https://api.example.com/items"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(got) != doc {
			t.Fatalf("body %q, %v; want the whole document", got, err)
		}
		if n := s.attempts(); n != 2 {
			t.Errorf("%d attempts, want 2", n)
		}
	})
}

// Past the limit the body streams as before: the bytes read inside the
// attempt come first, the rest from the connection, and a break after the
// limit reaches the caller's read.
func TestBodyPastPreReadLimitStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cut := newCut(doc, io.ErrUnexpectedEOF)
		s := &script{steps: []func(*http.Request) (*http.Response, error){
			func(r *http.Request) (*http.Response, error) { return answer(r, cut, -1), nil },
		}}
		tr := retry.New(s, retry.Policy{PreReadBytes: 8})
		resp, err := tr.RoundTrip(get(t.Context(), "https://api.example.com/items"))
		if err != nil {
			t.Fatal(err)
		}
		if n := cut.read.Load(); n > 8 {
			t.Errorf("%d bytes read inside the attempt, want at most the limit of 8", n)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != doc || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("body %q, %v; want the document, then the break", got, err)
		}
		if n := s.attempts(); n != 1 {
			t.Errorf("%d attempts, want 1", n)
		}
	})
}

// A body the body layer can resume (a strong validator), one whose length
// is announced past the limit, an event stream, and every body when the
// policy turns pre-reading off, are handed back unread.
func TestPreReadLeavesStreamsAlone(t *testing.T) {
	cases := []struct {
		name string
		p    retry.Policy
		cl   int64
		kv   []string
	}{
		{"strong ETag", retry.Policy{}, int64(len(doc)), []string{"Etag", `"v1"`}},
		{"long Content-Length", retry.Policy{PreReadBytes: 8}, int64(len(doc)), nil},
		{"event stream", retry.Policy{}, -1, []string{"Content-Type", "text/event-stream; charset=utf-8"}},
		{"ndjson", retry.Policy{}, -1, []string{"Content-Type", "application/x-ndjson"}},
		{"watch", retry.Policy{}, -1, []string{"Content-Type", "application/json;stream=watch"}},
		{"off", retry.Policy{PreReadBytes: -1}, int64(len(doc)), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cut := newCut(doc, io.EOF)
			tr := retry.New(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return answer(r, cut, c.cl, c.kv...), nil
			}), c.p)
			resp, err := tr.RoundTrip(get(t.Context(), "https://api.example.com/items"))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if n := cut.read.Load(); n != 0 {
				t.Errorf("%d bytes read inside the attempt, want none", n)
			}
		})
	}
}

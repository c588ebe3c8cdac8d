package steady_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/chunk"
	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/internal/wiretest"
)

// A list too long for one URL is split with chunk.Plan and run with FanOut;
// a 500 on a sub-request is re-sent, and the concurrency bound holds.
func TestFanOutOverChunks(t *testing.T) {
	var active, peak, fivehundreds atomic.Int32
	srv := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := active.Add(1)
		defer active.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if len(r.URL.String()) > 2000 {
			w.WriteHeader(http.StatusRequestURITooLong)
			return
		}
		ids := strings.Split(r.URL.Query().Get("ids"), ",")
		if slices.Contains(ids, "id0100") && fivehundreds.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "[%d]", len(ids))
	}))
	defer srv.Close()
	c := newClient(t, steady.Options{Concurrency: 3, Policy: fast()})

	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("id%04d", i)
	}
	base, _ := url.Parse(srv.URL + "/lookup")
	plan, err := chunk.Plan(base, "ids", ids, 2000)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := steady.FanOut(context.Background(), c, plan, fanout.Options{}, func(ctx context.Context, u *url.URL) (int, error) {
		var n []int
		err := c.GetJSON(ctx, u.String(), nil, &n)
		return n[0], err
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if total != 1000 || len(plan) < 4 {
		t.Fatalf("%d ids came back over %d sub-requests", total, len(plan))
	}
	if peak.Load() > 3 {
		t.Errorf("%d requests in flight, the bound is 3", peak.Load())
	}
	if fivehundreds.Load() < 2 {
		t.Errorf("the 500 was not re-sent")
	}
}

func TestFanOutMethodStopsOnFatal(t *testing.T) {
	srv := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/3" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Write([]byte("{}"))
	}))
	defer srv.Close()
	c := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
	err := c.FanOut(context.Background(), 6, func(ctx context.Context, i int) error {
		return c.GetJSON(ctx, fmt.Sprintf("/%d", i), nil, new(any))
	})
	var se *steady.StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 || fanout.IsInterrupted(err) {
		t.Fatalf("err = %v, want the 404 as a fatal failure", err)
	}
}

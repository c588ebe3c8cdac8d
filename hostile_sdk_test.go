package steady_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/chunk"
	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/internal/wiretest"
)

// The README's FanOut + GetJSON pattern: a 429 asking for 30 s, beyond the
// policy's MaxRetryAfter, interrupts the run, and the interruption says how
// long to wait, read from the *RateLimitError through the one interface
// fanout reads. A wait of 0 would make a sleep-then-resume loop spin.
func TestFanOutInterruptionCarriesRateLimitWait(t *testing.T) {
	srv := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	p := fast()
	p.MaxRetryAfter = 10 * time.Second
	c := newClient(t, steady.Options{Policy: p})

	_, err := steady.FanOut(context.Background(), c, []string{"a", "b"}, fanout.Options{},
		func(ctx context.Context, id string) (map[string]any, error) {
			var v map[string]any
			return v, c.GetJSON(ctx, srv.URL+"/items/"+id, nil, &v)
		})
	in, ok := fanout.AsInterruption(err)
	if !ok {
		t.Fatalf("FanOut: %v, want an interruption", err)
	}
	if got, want := in.RetryAfter(), 30*time.Second; got != want {
		t.Errorf("Interruption.RetryAfter() = %v, want %v", got, want)
	}
}

// An Express server keeps the first 1,000 query parameters and silently
// drops the rest. Planned with chunk's default cap of values per URL, a
// FanOut of 5,000 ids in a repeated parameter gets every row back, though
// the URL budget alone would fit many more ids in one URL.
func TestFanOutOfChunksSurvivesAParameterLimit(t *testing.T) {
	srv := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		params := strings.Split(r.URL.RawQuery, "&")
		params = params[:min(len(params), 1000)] // what Express's query parser keeps
		rows := []string{}
		for _, p := range params {
			if v, ok := strings.CutPrefix(p, "id="); ok {
				rows = append(rows, v)
			}
		}
		json.NewEncoder(w).Encode(rows)
	}))
	defer srv.Close()
	c := newClient(t, steady.Options{Policy: fast()})
	ids := make([]string, 5000)
	for i := range ids {
		ids[i] = fmt.Sprintf("i%d", i)
	}
	base, _ := url.Parse(srv.URL + "/rows?fields=all")
	plan, err := chunk.PlanWith(base, "id", ids, chunk.Options{Repeat: true, MaxURLBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := steady.FanOut(context.Background(), c, plan, fanout.Options{}, func(ctx context.Context, u *url.URL) ([]string, error) {
		var rows []string
		return rows, c.GetJSON(ctx, u.String(), nil, &rows)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range parts {
		got = append(got, p...)
	}
	if !slices.Equal(got, ids) {
		t.Errorf("%d rows of %d ids", len(got), len(ids))
	}
}

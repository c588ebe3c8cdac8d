package limitertest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/steadyhttp/steady/internal/limitertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFloor(t *testing.T) {
	one := []limitertest.Limiter{{Limit: 20, WindowMs: 2000}}
	for _, c := range []struct {
		n    int
		ls   []limitertest.Limiter
		want time.Duration
	}{
		{0, one, 0},
		{20, one, 0},
		{21, one, 2 * time.Second},
		{61, one, 6 * time.Second},
		{30, []limitertest.Limiter{{Limit: 10, WindowMs: 1000}, {Limit: 15, WindowMs: 4000}}, 5 * time.Second},
	} {
		if got := limitertest.Floor(c.n, c.ls); got != c.want {
			t.Errorf("Floor(%d, %+v) = %v, want %v", c.n, c.ls, got, c.want)
		}
	}
}

// The server counts what it served and refused: a limit of 2 a minute
// serves two pages of three requests and refuses the third.
func TestServerCountsRefusals(t *testing.T) {
	s := limitertest.Start(t, limitertest.Config{Rows: 3, Page: 1,
		Limiters: []limitertest.Limiter{{Limit: 2, WindowMs: 60000, Headers: "draft-8"}}})
	for i, want := range []int{200, 200, 429} {
		resp, err := http.Get(s.URL + "/items")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	if served, refused := s.Stats(t); served != 2 || refused != 1 {
		t.Errorf("stats: %d served, %d refused; want 2 and 1", served, refused)
	}
	s.Stop()
	s.Stop()
}

// Headers "none" refuses with a bare 429: no quota field, no Retry-After.
func TestHeadersNoneIsABare429(t *testing.T) {
	s := limitertest.Start(t, limitertest.Config{Rows: 3, Page: 1,
		Limiters: []limitertest.Limiter{{Limit: 1, WindowMs: 60000, Headers: "none"}}})
	for i, want := range []int{200, 429} {
		resp, err := http.Get(s.URL + "/items")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
		for name := range resp.Header {
			if name == "Retry-After" || strings.Contains(strings.ToLower(name), "ratelimit") {
				t.Errorf("request %d carries %s: %q", i, name, resp.Header.Get(name))
			}
		}
	}
}

package steadytest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/steadytest"
)

// inBubble runs f in a synctest bubble with a handler for opt served over
// in-memory connections, and shuts everything down after.
func inBubble(t *testing.T, opt steadytest.ServerOptions, f func(t *testing.T, h *steadytest.Handler, c *http.Client)) {
	synctest.Test(t, func(t *testing.T) {
		h, err := steadytest.NewHandler(opt)
		if err != nil {
			t.Fatal(err)
		}
		p := newPipeNet(h)
		defer p.shutdown(h)
		f(t, h, p.client())
	})
}

const pageURL = "http://127.0.0.1" + steadytest.ItemsPath

func scripted(f steadytest.Fault) steadytest.ServerOptions {
	return steadytest.ServerOptions{Rows: 100, Faults: steadytest.Faults{Script: map[int]steadytest.Fault{1: f}}}
}

func TestHangLastsUntilTheClientGivesUp(t *testing.T) {
	inBubble(t, scripted(steadytest.Fault{Kind: steadytest.Hang}), func(t *testing.T, h *steadytest.Handler, c *http.Client) {
		c.Timeout = 7 * time.Second
		start := time.Now()
		_, err := c.Get(pageURL)
		if err == nil {
			t.Fatal("a hang produced a response")
		}
		if got := time.Since(start); got != 7*time.Second {
			t.Errorf("gave up after %v, want the client's 7s", got)
		}
		synctest.Wait() // the handler notices the client left
		r := h.Requests()[0]
		if r.Fault.Kind != steadytest.Hang || r.Status != 0 {
			t.Errorf("log: %v status %d, want hang with no status", r.Fault, r.Status)
		}
	})
}

func TestHangForThenServe(t *testing.T) {
	inBubble(t, scripted(steadytest.Fault{Kind: steadytest.Hang, For: 2 * time.Second}), func(t *testing.T, h *steadytest.Handler, c *http.Client) {
		start := time.Now()
		resp, body := get(t, c, pageURL)
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("response after %v, want 2s", got)
		}
		var rows []steadytest.Row
		decode(t, body, &rows)
		if resp.StatusCode != 200 || len(rows) != 100 {
			t.Errorf("after the hang: %s with %d rows", resp.Status, len(rows))
		}
	})
}

func TestStallMidBodyUntilTheClientGivesUp(t *testing.T) {
	inBubble(t, scripted(steadytest.Fault{Kind: steadytest.Stall, After: 500}), func(t *testing.T, h *steadytest.Handler, c *http.Client) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("headers should arrive: %v", err)
		}
		defer resp.Body.Close()
		if time.Since(start) != 0 {
			t.Errorf("headers took %v, want none", time.Since(start))
		}
		body, err := io.ReadAll(resp.Body)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("read error = %v, want the client's deadline", err)
		}
		if len(body) != 500 || time.Since(start) != 5*time.Second {
			t.Errorf("read %d bytes in %v, want 500 then silence until 5s", len(body), time.Since(start))
		}
	})
}

func TestStallForThenTheRest(t *testing.T) {
	inBubble(t, scripted(steadytest.Fault{Kind: steadytest.Stall, For: 3 * time.Second}), func(t *testing.T, h *steadytest.Handler, c *http.Client) {
		start := time.Now()
		resp, body := get(t, c, pageURL)
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("body complete after %v, want 3s", got)
		}
		if int64(len(body)) != resp.ContentLength {
			t.Errorf("read %d of %d bytes", len(body), resp.ContentLength)
		}
	})
}

func TestDripIsSlowButSteady(t *testing.T) {
	const chunk, every = 1000, 50 * time.Millisecond
	inBubble(t, scripted(steadytest.Fault{Kind: steadytest.Drip, Chunk: chunk, Every: every}), func(t *testing.T, h *steadytest.Handler, c *http.Client) {
		start := time.Now()
		resp, err := c.Get(pageURL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got []byte
		last, longest := time.Now(), time.Duration(0)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			longest, last = max(longest, time.Since(last)), time.Now()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		writes := (len(got) + chunk - 1) / chunk
		if want := time.Duration(writes-1) * every; time.Since(start) != want {
			t.Errorf("%d bytes took %v, want %v", len(got), time.Since(start), want)
		}
		if longest > every {
			t.Errorf("a gap of %v between reads, want at most %v", longest, every)
		}
		var rows []steadytest.Row
		decode(t, got, &rows)
		if len(rows) != 100 {
			t.Errorf("dripped %d rows, want 100", len(rows))
		}
	})
}

func TestRetryAfterDateIsRoundedUpInVirtualTime(t *testing.T) {
	inBubble(t, scripted(steadytest.Fault{Kind: steadytest.Status, Status: 429, RetryAfter: time.Second, RetryAfterDate: true}),
		func(t *testing.T, h *steadytest.Handler, c *http.Client) {
			time.Sleep(300 * time.Millisecond)
			resp, _ := get(t, c, pageURL)
			// Now is 1.3s past a whole second; the wait ends 2.3s past it,
			// and the date names the next whole second.
			want := time.Now().Truncate(time.Second).Add(2 * time.Second).UTC().Format(http.TimeFormat)
			if got := resp.Header.Get("Retry-After"); got != want {
				t.Errorf("Retry-After = %q, want %q", got, want)
			}
		})
}

func TestQuotaRefusesThenRefills(t *testing.T) {
	opt := steadytest.ServerOptions{Rows: 10, Faults: steadytest.Faults{
		Quota: steadytest.Quota{Limit: 3, Window: 10 * time.Second},
	}}
	inBubble(t, opt, func(t *testing.T, h *steadytest.Handler, c *http.Client) {
		steps := []struct {
			wait       time.Duration
			status     int
			remaining  string
			reset      string
			retryAfter string
		}{
			{0, 200, "2", "10", ""},
			{time.Second, 200, "1", "9", ""},
			{500 * time.Millisecond, 200, "0", "9", ""}, // 8.5s left, rounded up
			{0, 429, "0", "9", "9"},
			{4 * time.Second, 429, "0", "5", "5"},
			{5 * time.Second, 200, "2", "10", ""}, // a new window
		}
		for i, s := range steps {
			time.Sleep(s.wait)
			resp, _ := get(t, c, pageURL)
			got := []string{strconv.Itoa(resp.StatusCode), resp.Header.Get("X-RateLimit-Remaining"), resp.Header.Get("X-RateLimit-Reset"), resp.Header.Get("Retry-After")}
			want := []string{strconv.Itoa(s.status), s.remaining, s.reset, s.retryAfter}
			if !slices.Equal(got, want) {
				t.Errorf("request %d: status, remaining, reset, Retry-After = %q, want %q", i+1, got, want)
			}
			if combined := "limit=3, remaining=" + s.remaining + ", reset=" + s.reset; resp.Header.Get("RateLimit") != combined {
				t.Errorf("request %d: RateLimit = %q, want %q", i+1, resp.Header.Get("RateLimit"), combined)
			}
		}
		if r := h.Requests()[3]; r.Fault.Kind != steadytest.QuotaExceeded || r.Status != 429 {
			t.Errorf("log of the refused request: %v %d", r.Fault, r.Status)
		}
	})
}

func TestQuotaHeaderForms(t *testing.T) {
	cases := []struct {
		name   string
		quota  steadytest.Quota
		want   map[string]string
		absent []string
	}{
		{"default", steadytest.Quota{Limit: 5}, map[string]string{
			"X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "4", "X-RateLimit-Reset": "60",
			"RateLimit": "limit=5, remaining=4, reset=60",
		}, []string{"RateLimit-Policy", "RateLimit-Limit"}},
		{"split fields", steadytest.Quota{Limit: 5, Window: 30 * time.Second, Headers: steadytest.RateLimitSplit}, map[string]string{
			"RateLimit-Limit": "5", "RateLimit-Remaining": "4", "RateLimit-Reset": "30",
		}, []string{"RateLimit", "X-RateLimit-Limit"}},
		{"structured", steadytest.Quota{Limit: 5, Window: 30 * time.Second, Headers: steadytest.RateLimitStructured}, map[string]string{
			"RateLimit-Policy": `"default";q=5;w=30`, "RateLimit": `"default";r=4;t=30`,
		}, []string{"X-RateLimit-Remaining"}},
		{"epoch reset", steadytest.Quota{Limit: 5, Window: 30 * time.Second, Headers: steadytest.XRateLimit, EpochReset: true}, map[string]string{
			// The bubble's clock starts at 2000-01-01T00:00:00Z.
			"X-RateLimit-Reset": strconv.FormatInt(time.Date(2000, 1, 1, 0, 0, 30, 0, time.UTC).Unix(), 10),
		}, []string{"RateLimit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inBubble(t, steadytest.ServerOptions{Faults: steadytest.Faults{Quota: c.quota}}, func(t *testing.T, h *steadytest.Handler, cl *http.Client) {
				resp, _ := get(t, cl, pageURL)
				for k, v := range c.want {
					if got := resp.Header.Get(k); got != v {
						t.Errorf("%s = %q, want %q", k, got, v)
					}
				}
				for _, k := range c.absent {
					if _, ok := resp.Header[k]; ok {
						t.Errorf("%s present: %q", k, resp.Header.Get(k))
					}
				}
			})
		})
	}
}

func TestHandlerCloseReleasesAHang(t *testing.T) {
	inBubble(t, scripted(steadytest.Fault{Kind: steadytest.Hang}), func(t *testing.T, h *steadytest.Handler, c *http.Client) {
		done := make(chan error)
		go func() {
			_, err := c.Get(pageURL)
			done <- err
		}()
		synctest.Wait() // the handler is hanging
		start := time.Now()
		h.Close()
		if err := <-done; err == nil {
			t.Error("a hang released by Close produced a response")
		}
		if time.Since(start) != 0 {
			t.Errorf("Close took %v to release the hang", time.Since(start))
		}
	})
}

package steady_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/retry"
)

// Issue 22 (ADR 0362): the answer that spends the quota says so in its
// header, remaining 0 until a reset 30 s on, and its body is cut mid-way.
// The body is read inside the attempt (it has no validator), so the
// attempt fails and is re-sent; the re-send must wait for the reset the
// cut answer named, not draw the spent quota at once. In virtual time.
func TestHostileCutAnswerThatSpentTheQuota(t *testing.T) {
	for _, form := range []string{"x-ratelimit", "draft"} {
		t.Run(form, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				arr := &arrivals{}
				start := time.Now()
				reset := start.Add(30 * time.Second)
				mn := newMemNet(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n := arr.add()
					now := time.Now()
					left := "0"
					if !now.Before(reset) {
						left = "9"
					} else if n > 1 {
						w.WriteHeader(http.StatusTooManyRequests) // drawn from the spent quota
						return
					}
					if form == "draft" {
						w.Header().Set("RateLimit", "limit=10, remaining="+left+", reset="+strconv.Itoa(int(reset.Sub(now).Seconds())))
					} else {
						w.Header().Set("X-RateLimit-Limit", "10")
						w.Header().Set("X-RateLimit-Remaining", left)
						w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
					}
					body := `[{"id":1},{"id":2},{"id":3},{"id":4}]`
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
					if n > 1 {
						io.WriteString(w, body)
						return
					}
					io.WriteString(w, body[:10])
					w.(http.Flusher).Flush()
					if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
						c.Close()
					}
				}))
				defer mn.shutdown()
				c := newClient(t, steady.Options{Transport: mn.tr, Policy: retry.Policy{InitialBackoff: time.Millisecond}})
				var got []map[string]int
				if err := c.GetJSON(context.Background(), "http://api.test/items", nil, &got); err != nil {
					t.Fatal(err)
				}
				if len(got) != 4 {
					t.Errorf("%d items, want 4", len(got))
				}
				gaps := arr.gaps()
				if len(gaps) != 1 {
					t.Fatalf("%d requests (gaps %v); want the cut one and one re-send", arr.count(), gaps)
				}
				if gaps[0] < 30*time.Second || gaps[0] > 31*time.Second {
					t.Errorf("the re-send came %v after the cut answer, which named a reset 30s on", gaps[0])
				}
			})
		})
	}
}

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/steadytest"
)

// A resumed --pages range harvest starts with the saved Range header of
// the next page: no row before it is asked for again, and every row is
// written once. Sequential and concurrent.
func TestHarvestRangeResumeSendsTheSavedRange(t *testing.T) {
	for _, conc := range []string{"1", "4"} {
		t.Run("concurrent "+conc, func(t *testing.T) {
			var failed atomic.Bool
			srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1000, Style: steadytest.Range, Faults: steadytest.Faults{
				Rule: func(c steadytest.Call) steadytest.Fault {
					if c.Offset == 300 && failed.CompareAndSwap(false, true) {
						return steadytest.Fault{Kind: steadytest.Status, Status: 400}
					}
					return steadytest.Fault{}
				}}})
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			args := []string{"harvest", "-q", "--concurrent", conc, "--pages", "range:100", srv.URL + "/items", "-o", out}
			if code, _, errText := cli(t, args...); code != exitFailed {
				t.Fatalf("first run: exit %d, %s", code, errText)
			}
			before := len(srv.Requests())
			if code, _, errText := cli(t, append(args, "--resume")...); code != exitOK {
				t.Fatalf("resume: exit %d, %s", code, errText)
			}
			checkExact(t, rowsOf(t, out), 1000)
			reqs := srv.Requests()[before:]
			if got := reqs[0].Header.Get("Range"); got != "300-399" {
				t.Errorf("the resume's first Range is %q, want 300-399", got)
			}
			for _, r := range reqs {
				var a int
				if _, err := fmt.Sscanf(r.Header.Get("Range"), "%d-", &a); err != nil || a < 300 {
					t.Errorf("the resume asked for Range %q", r.Header.Get("Range"))
				}
			}
		})
	}
}

// With pages fetched at once, the exit code is the failed page's: a
// rate limit past the cap on that page exits 4, and a plain failure
// exits 1 even while a page after it, in flight beside it, met a rate
// limit.
func TestHarvestConcurrentExitCodeIsTheFailedPages(t *testing.T) {
	cases := []struct {
		name   string
		faults map[int]steadytest.Fault // by offset
		want   int
	}{
		{"rate limited", map[int]steadytest.Fault{300: {Kind: steadytest.Status, Status: 503, RetryAfter: time.Hour}}, exitRateLimited},
		{"failed beside a rate limit", map[int]steadytest.Fault{
			300: {Kind: steadytest.Status, Status: 400},
			400: {Kind: steadytest.Status, Status: 503, RetryAfter: time.Hour},
		}, exitFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 2000, Style: steadytest.Offset, Faults: steadytest.Faults{
				Rule: func(call steadytest.Call) steadytest.Fault { return c.faults[call.Offset] }}})
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			code, _, errText := cli(t, "harvest", "-q", "--concurrent", "4", "--retries", "1",
				"--pages", "offset:_start:_limit", srv.URL+"/items?_limit=100", "-o", out)
			if code != c.want {
				t.Fatalf("exit %d, want %d: %s", code, c.want, errText)
			}
			if c.want == exitRateLimited && !strings.Contains(errText, "wait") {
				t.Errorf("no wait said: %s", errText)
			}
			checkExact(t, rowsOf(t, out+".partial"), 300)
		})
	}
}

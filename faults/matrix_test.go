package faults_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	steady "github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/steadytest"
)

// The harvest of every case: 20,000 rows, 500 a page, so 40 pages of about
// 45 KB (1.8 MB in all).
const (
	matrixRows = 20000
	pageSize   = 500
	pages      = matrixRows / pageSize
	// breakAfter is the page after which the mid-walk faults strike.
	breakAfter = 10
)

// loopbackOptions are client settings suited to a server on this machine.
// Loopback answers within milliseconds, so the timeouts that guard against
// a silent peer can be short without cutting a healthy exchange, and the
// backoffs that spare a real service's capacity would only slow the run.
// Each figure is chosen against the toxics below:
//   - ResponseHeaderTimeout 1 s: the latency toxic delays headers by at most
//     250 ms, so only a dead connection reaches it.
//   - ReadTimeout 500 ms: the bandwidth toxic delivers a chunk at least
//     every 100 ms, so a slow body never looks dead.
//   - StallTimeout 1 s: several times shorter than the bandwidth walk, which
//     must finish anyway, since bytes arriving restart the budget.
//   - InitialBackoff 10 ms, MaxBackoff 100 ms: a refused or reset loopback
//     connection needs no long pause, and the run stays short.
//   - MaxAttempts 10: with reset_peer on 30% of connections a page fails
//     ten times in a row with probability 0.3^10, about 6e-6, so the run
//     does not flake, while a fault that always bites (a body budget below
//     one page) still ends in ErrExhausted within a second.
func loopbackOptions(base string) steady.Options {
	return steady.Options{
		BaseURL:               base,
		ConnectTimeout:        time.Second,
		ResponseHeaderTimeout: time.Second,
		Policy: retry.Policy{
			MaxAttempts:    10,
			InitialBackoff: 10 * time.Millisecond,
			MaxBackoff:     100 * time.Millisecond,
			StallTimeout:   time.Second,
			ReadTimeout:    500 * time.Millisecond,
		},
	}
}

// freshConnections makes the client dial a new connection for every
// attempt. toxiproxy draws a toxic's toxicity once per connection, and
// slow_close acts only when a connection closes, so without keep-alive
// every page meets the toxic afresh.
func freshConnections(o *steady.Options) {
	o.Transport = &http.Transport{
		DialContext:           (&net.Dialer{Timeout: o.ConnectTimeout}).DialContext,
		ResponseHeaderTimeout: o.ResponseHeaderTimeout,
		DisableKeepAlives:     true,
	}
}

// A fault is one row of the matrix.
type fault struct {
	name    string // the subtest's name and the matrix's fault column
	setting string // how the toxic is set, for the matrix
	// want is nil when every row must arrive exactly once, else the stop
	// reason the walk must end with.
	want error
	// arm adds the toxic to p and adjusts the client's options o.
	arm func(t *testing.T, p *toxiproxy.Proxy, o *steady.Options) armed
}

// armed is what a fault does during and after the walk.
type armed struct {
	onPage func(n int)                          // after each page; nil: nothing
	check  func(t *testing.T, h harvest) string // the fault's own checks; returns a note for the matrix
	stop   func()                               // ends what arm started; nil: nothing
}

// addToxic adds a toxic to the responses (downstream) or fails the test.
func addToxic(t *testing.T, p *toxiproxy.Proxy, typ string, toxicity float32, attrs toxiproxy.Attributes) {
	t.Helper()
	if _, err := p.AddToxic(typ, typ, "downstream", toxicity, attrs); err != nil {
		t.Fatalf("adding the %s toxic: %v", typ, err)
	}
}

func faults() []fault {
	return []fault{
		{
			name:    "none",
			setting: "no toxic: the baseline",
			arm: func(t *testing.T, p *toxiproxy.Proxy, o *steady.Options) armed {
				return armed{check: func(t *testing.T, h harvest) string {
					if h.sum.Retries != 0 {
						t.Errorf("%d re-sends without a fault", h.sum.Retries)
					}
					return "every row once"
				}}
			},
		},
		{
			name:    "reset_peer",
			setting: "toxicity 0.3, timeout 0; a new connection per attempt",
			arm: func(t *testing.T, p *toxiproxy.Proxy, o *steady.Options) armed {
				freshConnections(o)
				addToxic(t, p, "reset_peer", 0.3, toxiproxy.Attributes{"timeout": 0})
				return armed{check: func(t *testing.T, h harvest) string {
					// Forty or more connections at 0.3: none reset has a
					// probability of 0.7^40, below 1e-6.
					if h.sum.Retries == 0 {
						t.Error("no connection was reset: the toxic did not act")
					}
					return fmt.Sprintf("every row once; %d resets re-sent", h.sum.Retries)
				}}
			},
		},
		{
			name:    "latency",
			setting: "200 ms ± 50 ms jitter on every response",
			arm: func(t *testing.T, p *toxiproxy.Proxy, o *steady.Options) armed {
				addToxic(t, p, "latency", 1, toxiproxy.Attributes{"latency": 200, "jitter": 50})
				return armed{check: func(t *testing.T, h harvest) string {
					if floor := time.Duration(h.sum.Pages) * 150 * time.Millisecond; h.elapsed < floor {
						t.Errorf("the walk took %v, less than %d pages at 150 ms or more: the toxic did not act", h.elapsed, h.sum.Pages)
					}
					if h.sum.Retries != 0 {
						t.Errorf("%d re-sends: a delay below every timeout was taken for a failure", h.sum.Retries)
					}
					per := h.elapsed / time.Duration(max(h.sum.Pages, 1))
					return fmt.Sprintf("every row once; %d ms a page, no re-send", per.Milliseconds())
				}}
			},
		},
		{
			name:    "bandwidth",
			setting: "500 KB/s (stall budget 1 s, read timeout 500 ms)",
			arm: func(t *testing.T, p *toxiproxy.Proxy, o *steady.Options) armed {
				const rate = 500 // toxiproxy's KB: 1,000 bytes
				addToxic(t, p, "bandwidth", 1, toxiproxy.Attributes{"rate": rate})
				return armed{check: func(t *testing.T, h harvest) string {
					floor := time.Duration(float64(h.sum.Bytes) / (rate * 1000) * 0.9 * float64(time.Second))
					if h.elapsed < floor {
						t.Errorf("the walk took %v, less than %v for %d bytes at %d KB/s: the toxic did not act", h.elapsed, floor, h.sum.Bytes, rate)
					}
					if budget := o.Policy.StallTimeout; h.elapsed < 2*budget {
						t.Errorf("the walk took %v, not well beyond the stall budget %v: it proves nothing", h.elapsed, budget)
					}
					if h.sum.Retries != 0 {
						t.Errorf("%d re-sends: a slow body was taken for a silent one", h.sum.Retries)
					}
					return fmt.Sprintf("every row once; %.1f× the stall budget, no re-send", h.elapsed.Seconds()/o.Policy.StallTimeout.Seconds())
				}}
			},
		},
		{
			name:    "slow_close",
			setting: "close held 1 s; a new connection per attempt",
			arm: func(t *testing.T, p *toxiproxy.Proxy, o *steady.Options) armed {
				const delay = time.Second
				freshConnections(o)
				addToxic(t, p, "slow_close", 1, toxiproxy.Attributes{"delay": delay.Milliseconds()})
				return armed{check: func(t *testing.T, h harvest) string {
					// Content-Length frames every body, so no page may wait for
					// its connection to close: 40 waits would take 40 s.
					if limit := time.Duration(h.sum.Pages) * delay / 4; h.elapsed > limit {
						t.Errorf("the walk took %v for %d pages: pages waited for the held close", h.elapsed, h.sum.Pages)
					}
					return "every row once; no page waited for a close"
				}}
			},
		},
		{
			name:    "limit_data",
			setting: "64 KiB per connection: one page whole, the next cut mid-body",
			arm: func(t *testing.T, p *toxiproxy.Proxy, o *steady.Options) armed {
				addToxic(t, p, "limit_data", 1, toxiproxy.Attributes{"bytes": 64 << 10})
				return armed{check: func(t *testing.T, h harvest) string {
					// A response is 45-47.5 KB, so each connection carries one
					// page whole and cuts the next 17 KB or more into its body;
					// the re-send gets a new connection and a new budget.
					if want := int64(h.sum.Pages - 1); h.sum.Retries != want {
						t.Errorf("%d re-sends, want %d: one cut body for every page after the first", h.sum.Retries, want)
					}
					return fmt.Sprintf("every row once; %d cut bodies re-sent", h.sum.Retries)
				}}
			},
		},
		{
			name:    "limit_data_below_a_page",
			setting: "16 KiB per connection: every body cut",
			want:    retry.ErrExhausted,
			arm: func(t *testing.T, p *toxiproxy.Proxy, o *steady.Options) armed {
				addToxic(t, p, "limit_data", 1, toxiproxy.Attributes{"bytes": 16 << 10})
				return armed{check: func(t *testing.T, h harvest) string {
					re := retryError(t, h.err)
					if re != nil && re.Attempts != o.Policy.MaxAttempts {
						t.Errorf("stopped after %d attempts, want MaxAttempts = %d", re.Attempts, o.Policy.MaxAttempts)
					}
					if h.rows != 0 {
						t.Errorf("%d rows arrived from bodies that were all cut", h.rows)
					}
					return fmt.Sprintf("`ErrExhausted` after %d attempts on page 1; no cut body passed as a page", h.attempts())
				}}
			},
		},
		{
			name:    "timeout",
			setting: "timeout 0 (data dropped, connection kept) from page 11; header timeout 300 ms, stall budget 400 ms",
			want:    retry.ErrStalled,
			arm: func(t *testing.T, p *toxiproxy.Proxy, o *steady.Options) armed {
				const header = 300 * time.Millisecond
				o.ResponseHeaderTimeout = header
				o.Policy.ReadTimeout = header
				o.Policy.StallTimeout = 400 * time.Millisecond
				var struck time.Time
				return armed{
					onPage: func(n int) {
						if n == breakAfter {
							addToxic(t, p, "timeout", 1, toxiproxy.Attributes{"timeout": 0})
							struck = time.Now()
						}
					},
					check: func(t *testing.T, h harvest) string {
						re := retryError(t, h.err)
						if re != nil && re.Attempts != 2 {
							t.Errorf("stopped after %d attempts, want 2: the first re-send is never withheld, the second does not fit the budget", re.Attempts)
						}
						if want := breakAfter * pageSize; h.rows != want {
							t.Errorf("%d rows arrived, want the %d of the pages before the toxic", h.rows, want)
						}
						// Two attempts cost two header timeouts; five would be
						// the attempt bound's answer, which the budget prevents.
						took := h.end.Sub(struck)
						if took < 2*header || took >= 5*header {
							t.Errorf("the walk ended %v after the toxic, want between 2 and 5 header timeouts (%v, %v)", took, 2*header, 5*header)
						}
						return fmt.Sprintf("`ErrStalled` after 2 attempts on page %d, %.2f s after the toxic", breakAfter+1, took.Seconds())
					},
				}
			},
		},
		{
			name:    "disabled",
			setting: "proxy disabled after page 10, re-enabled after 3 refused connections",
			arm: func(t *testing.T, p *toxiproxy.Proxy, o *steady.Options) armed {
				var refused atomic.Int32
				enable, done := make(chan struct{}), make(chan struct{})
				var once sync.Once
				o.Reporter = event.Multi(o.Reporter, event.ReporterFunc(func(e event.Event) {
					if e.Kind == event.RetryScheduled && e.ErrClass == "refused" && refused.Add(1) == 3 {
						close(enable)
					}
				}))
				var wg sync.WaitGroup
				var enableErr error
				wg.Go(func() {
					select {
					case <-enable:
						enableErr = p.Enable()
					case <-done:
					}
				})
				return armed{
					onPage: func(n int) {
						if n == breakAfter {
							if err := p.Disable(); err != nil {
								t.Errorf("disabling the proxy: %v", err)
							}
						}
					},
					stop: func() {
						once.Do(func() { close(done) })
						wg.Wait()
					},
					check: func(t *testing.T, h harvest) string {
						if n := refused.Load(); n < 3 {
							t.Errorf("%d refused connections, want at least 3", n)
						}
						once.Do(func() { close(done) })
						wg.Wait()
						if enableErr != nil {
							t.Errorf("re-enabling the proxy: %v", enableErr)
						}
						return fmt.Sprintf("every row once; %d refused, then recovered", refused.Load())
					},
				}
			},
		},
	}
}

// retryError returns the retry layer's evidence in err, failing the test
// when there is none.
func retryError(t *testing.T, err error) *retry.Error {
	t.Helper()
	var re *retry.Error
	if !errors.As(err, &re) {
		t.Errorf("the error carries no *retry.Error: %v", err)
		return nil
	}
	return re
}

// A matrixRow is one line of the table in docs/reliability.md.
type matrixRow struct {
	fault, setting, outcome string
	rows, total, attempts   int
	elapsed                 time.Duration
}

// TestMatrix harvests the collection through toxiproxy once per fault, each
// with a fresh server and proxy, and logs the matrix as markdown rows.
func TestMatrix(t *testing.T) {
	cl := toxiproxyClient(t)
	var table []matrixRow
	for i, f := range faults() {
		t.Run(f.name, func(t *testing.T) {
			table = append(table, runFault(t, cl, i, f))
		})
	}
	t.Logf("the fault matrix for docs/reliability.md:\n%s", markdown(table))
}

// runFault harvests the collection through a new proxy armed with f and
// checks the outcome: every row exactly once, or f.want as a typed error
// with the rows before it intact and the walk marked incomplete.
func runFault(t *testing.T, cl *toxiproxy.Client, i int, f fault) matrixRow {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: matrixRows})
	defer srv.Close()
	p, err := cl.CreateProxy("steady-"+strconv.Itoa(i), "127.0.0.1:0", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatalf("creating the proxy: %v", err)
	}
	defer func() {
		if err := p.Delete(); err != nil {
			t.Errorf("deleting the proxy: %v", err)
		}
	}()

	tally := new(attemptCount)
	o := loopbackOptions("http://" + p.Listen)
	o.Reporter = tally
	a := f.arm(t, p, &o)
	if a.stop != nil {
		defer a.stop()
	}
	c, err := steady.New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	// A bound on the whole walk, so a fault the client mishandles fails the
	// test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	h := walk(ctx, c, tally, matrixRows, pageSize, a.onPage)
	if f.want == nil {
		for _, msg := range h.completeProblems() {
			t.Error(msg)
		}
	} else {
		for _, msg := range h.integrityProblems() {
			t.Error(msg)
		}
		var pe *paginate.Error
		switch {
		case !errors.Is(h.err, f.want):
			t.Errorf("walk ended with %v, want %v", h.err, f.want)
		case !errors.As(h.err, &pe):
			t.Errorf("walk error %v is not a *paginate.Error naming the page", h.err)
		}
		if h.sum.Complete || h.sum.Next == nil {
			t.Errorf("summary of a failed walk: Complete %v, Next %v; want false and the page to resume from", h.sum.Complete, h.sum.Next)
		}
		if h.rows >= h.total {
			t.Errorf("all %d rows arrived, yet the walk failed", h.rows)
		}
	}
	note := a.check(t, h)
	if t.Failed() {
		note = "FAILED: " + note
	}
	return matrixRow{fault: f.name, setting: f.setting, outcome: note,
		rows: h.rows, total: h.total, attempts: h.attempts(), elapsed: h.elapsed}
}

// markdown renders the matrix as the table of docs/reliability.md.
func markdown(rows []matrixRow) string {
	var b strings.Builder
	b.WriteString("| fault | setting | outcome | rows | attempts | elapsed |\n")
	b.WriteString("|---|---|---|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %d / %d | %d | %.2f s |\n",
			r.fault, r.setting, r.outcome, r.rows, r.total, r.attempts, r.elapsed.Seconds())
	}
	return b.String()
}

package bench

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/failsafehttp"

	"github.com/steadyhttp/steady"
)

var overloadDown = flag.Duration("overload.down", 0, "outage of TestOverloadBeside (0 skips it): a local server answers 503 for this long under steady load, behind each client")

// TestOverloadBeside runs one outage against a real local server for each
// contender in turn, each against a server of its own: no retry; steady's
// facade with its defaults (retry, budget, pacing and the per-host
// breaker); failsafe-go's default HTTP retry policy with its circuit
// breaker at its documented defaults; and the same with its adaptive
// throttler at its documented defaults. failsafe-go's defaults count only
// errors as failures, and a 503 is a response, so both are told that a
// 5xx is a failure, as failsafehttp's retry policy is; nothing else is
// tuned. Every contender has as many clients, each of its own, issuing
// requests at a fixed rate whatever the answers.
//
// It reports, per contender, the attempts that reached the server while
// it was down against no retry's, and the time from the return until every
// later second's requests succeed at 99% of the share they did before.
//
//	go -C bench test -run TestOverloadBeside -overload.down 60s -v
//	go -C bench test -run TestOverloadBeside -overload.down 10s -short -v
func TestOverloadBeside(t *testing.T) {
	if *overloadDown == 0 {
		t.Skip("run with -overload.down D")
	}
	clients, rate, before, after := 50, 5.0, 5*time.Second, 60*time.Second
	if testing.Short() {
		clients, after = 20, 20*time.Second
	}
	contenders := []struct {
		name string
		new  func(inner http.RoundTripper) *http.Client
	}{
		{"no retry", func(inner http.RoundTripper) *http.Client { return &http.Client{Transport: inner} }},
		{"steady (defaults)", func(inner http.RoundTripper) *http.Client {
			c, err := steady.New(steady.Options{Transport: inner})
			if err != nil {
				t.Fatal(err)
			}
			return c.HTTP()
		}},
		{"failsafe-go retry + circuit breaker", func(inner http.RoundTripper) *http.Client {
			cb := circuitbreaker.NewBuilder[*http.Response]().HandleIf(serverFailure).Build()
			return &http.Client{Transport: failsafehttp.NewRoundTripper(inner, failsafehttp.NewRetryPolicyBuilder().Build(), cb)}
		}},
		{"failsafe-go retry + adaptive throttler", func(inner http.RoundTripper) *http.Client {
			at := adaptivethrottler.NewBuilder[*http.Response]().HandleIf(serverFailure).Build()
			return &http.Client{Transport: failsafehttp.NewRoundTripper(inner, failsafehttp.NewRetryPolicyBuilder().Build(), at)}
		}},
	}
	// One contender at a time: side by side they would share the cores
	// and the file descriptors, and measure the machine.
	results := make([]outageFigures, len(contenders))
	for i, c := range contenders {
		results[i] = runOutage(c.new, clients, rate, before, *overloadDown, after)
	}
	t.Logf("%d clients per contender at %.0f requests/s each; %v healthy, %v of 503s, %v healthy", clients, rate, before, *overloadDown, after)
	t.Logf("%-40s %16s %12s %10s %12s", "contender", "sent while down", "vs no retry", "recovery", "ok after")
	for i, c := range contenders {
		r := results[i]
		rec := "never"
		if r.recovered {
			rec = fmt.Sprintf("%d s", int(r.recovery/time.Second))
		}
		t.Logf("%-40s %16d %11.3fx %10s %11.2f%%", c.name, r.downAttempts,
			float64(r.downAttempts)/float64(max(results[0].downAttempts, 1)), rec, 100*r.okAfter)
	}
}

// serverFailure is failsafehttp's notion of a failed HTTP call, stated for
// the breaker and the throttler: an error or a 5xx.
func serverFailure(resp *http.Response, err error) bool {
	return err != nil || resp != nil && resp.StatusCode >= 500
}

type outageFigures struct {
	downAttempts int64
	recovered    bool
	recovery     time.Duration
	okAfter      float64
}

// runOutage serves before, then 503s for down, then serves for after,
// while clients each issue rate requests a second, every request on its own
// goroutine, so slow ones do not hold back the load.
func runOutage(newClient func(http.RoundTripper) *http.Client, clients int, rate float64, before, down, after time.Duration) outageFigures {
	var downAttempts atomic.Int64
	var start time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if at := time.Since(start); at >= before && at < before+down {
			downAttempts.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	inner := newInner()
	defer inner.CloseIdleConnections()

	total := before + down + after
	bins := int(total / time.Second)
	issued, ok := make([]atomic.Int64, bins), make([]atomic.Int64, bins)
	var wg sync.WaitGroup
	start = time.Now()
	for c := range clients {
		client := newClient(inner)
		wg.Go(func() {
			every := time.Duration(float64(time.Second) / rate)
			// Clients are spread over the first interval, not in step.
			next := start.Add(every * time.Duration(c) / time.Duration(clients))
			for {
				time.Sleep(time.Until(next))
				at := time.Since(start)
				if at >= total {
					return
				}
				bin := int(at / time.Second)
				issued[bin].Add(1)
				wg.Go(func() {
					resp, err := client.Get(srv.URL)
					if err != nil {
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						ok[bin].Add(1)
					}
				})
				next = next.Add(every)
			}
		})
	}
	wg.Wait()
	share := func(i int) float64 { return float64(ok[i].Load()) / float64(max(issued[i].Load(), 1)) }
	var base float64
	for i := range int(before / time.Second) {
		base += share(i)
	}
	base /= before.Seconds()
	back := int((before + down) / time.Second)
	lastBad := back - 1
	var afterIssued, afterOK int64
	for i := back; i < bins; i++ {
		if share(i) < 0.99*base {
			lastBad = i
		}
		afterIssued += issued[i].Load()
		afterOK += ok[i].Load()
	}
	f := outageFigures{downAttempts: downAttempts.Load(), okAfter: float64(afterOK) / float64(max(afterIssued, 1))}
	if lastBad < bins-1 {
		f.recovered, f.recovery = true, time.Duration(lastBad+1-back)*time.Second
	}
	return f
}

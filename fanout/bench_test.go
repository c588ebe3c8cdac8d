package fanout_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/retry"
)

const (
	benchItems       = 2000
	benchConcurrency = 32
	benchDelay       = 10 * time.Millisecond
	// benchIdeal is 2,000 / 32 × 10 ms = 625 ms.
	benchIdeal = benchItems * benchDelay / benchConcurrency
)

// BenchmarkFanOut runs 2,000 sub-requests, 32 at a time, each answered
// after 10 ms, three ways in one run (bench/rounds.sh runs them in turn),
// against two servers:
//
//   - server=memory: a transport that answers from memory once 10 ms have
//     passed, so what a sub-request costs beyond its wait is the client
//     side's alone: the fan-out layer and the retry transport. This is the
//     goal's figure (ADR 250).
//   - server=loopback: a real server on 127.0.0.1, whose work and the
//     round trips' shares the machine's two cores with the client's.
//
// The contenders:
//
//   - impl=fanout: fanout.Run through a default retry transport;
//   - impl=errgroup: errgroup with SetLimit(32), the same fetch and client;
//   - impl=floor: 32 plain goroutines straight through the inner
//     transport, no gate, no retry, no results: what the machine allows
//     (timer overshoot, scheduling, and over loopback the round trips).
//
// x-ideal is the wall time over the ideal of 625 ms (goal: fanout within
// 1.12, as errgroup is). Run it with
//
//	bench/rounds.sh 6 ./fanout FanOut -test.benchtime 2x
//
// The loopback server's http.Transport is given MaxIdleConnsPerHost = 64:
// its default of 2 keeps only two connections for reuse, so a 32-way
// fan-out would open (and leave in TIME_WAIT) a new connection for most
// requests. The facade sets it the same way.
func BenchmarkFanOut(b *testing.B) {
	url, inner := benchServer(b)
	b.Run("server=memory", func(b *testing.B) { benchFanOut(b, "https://api.example.gov", sleepTransport{}) })
	b.Run("server=loopback", func(b *testing.B) { benchFanOut(b, url, inner) })
}

// sleepTransport answers every request after benchDelay, from memory, with
// the request's path as the body (as benchServer does).
type sleepTransport struct{}

func (sleepTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t := time.NewTimer(benchDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return &http.Response{
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"text/plain"}},
		Body:          io.NopCloser(strings.NewReader(req.URL.Path)),
		ContentLength: int64(len(req.URL.Path)),
		Request:       req,
	}, nil
}

func benchFanOut(b *testing.B, url string, inner http.RoundTripper) {
	client := &http.Client{Transport: retry.New(inner, retry.Policy{})}
	fetch := func(ctx context.Context, item int) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/"+strconv.Itoa(item), nil)
		if err != nil {
			return 0, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		return int(n), err
	}
	list := seq(benchItems)
	timed := func(b *testing.B, once func() error) {
		var runs int
		var wall time.Duration
		cpu0 := cpuTime()
		for b.Loop() {
			start := time.Now()
			err := once()
			wall += time.Since(start)
			runs++
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(wall)/float64(runs)/float64(benchIdeal), "x-ideal")
		// The process's CPU time, server included, per sub-request: what the
		// run costs the machine, which wall time hides while cores idle.
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(runs*benchItems)/1e3, "cpu-µs/item")
	}
	b.Run("impl=fanout", func(b *testing.B) {
		opt := fanout.Options{Concurrency: benchConcurrency}
		timed(b, func() error {
			res, err := fanout.Run(context.Background(), list, opt, fetch)
			if err == nil && len(res) != benchItems {
				err = fmt.Errorf("%d results", len(res))
			}
			return err
		})
	})
	b.Run("impl=errgroup", func(b *testing.B) {
		timed(b, func() error {
			res := make([]int, len(list))
			g, ctx := errgroup.WithContext(context.Background())
			g.SetLimit(benchConcurrency)
			for i, item := range list {
				g.Go(func() error {
					r, err := fetch(ctx, item)
					res[i] = r
					return err
				})
			}
			return g.Wait()
		})
	})
	b.Run("impl=floor", func(b *testing.B) {
		bare := &http.Client{Transport: inner}
		timed(b, func() error {
			var next atomic.Int64
			var failed atomic.Value
			var wg sync.WaitGroup
			for range benchConcurrency {
				wg.Go(func() {
					for i := next.Add(1) - 1; i < benchItems; i = next.Add(1) - 1 {
						resp, err := bare.Get(url + "/" + strconv.FormatInt(i, 10))
						if err != nil {
							failed.Store(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				})
			}
			wg.Wait()
			if err, _ := failed.Load().(error); err != nil {
				return err
			}
			return nil
		})
	})
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchServer starts the loopback server and returns its URL and a transport
// tuned for a 32-way fan-out; both are closed when b ends.
func benchServer(b *testing.B) (string, *http.Transport) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(benchDelay)
		io.WriteString(w, r.URL.Path)
	}))
	b.Cleanup(srv.Close)
	inner := http.DefaultTransport.(*http.Transport).Clone()
	inner.MaxIdleConnsPerHost = 2 * benchConcurrency
	b.Cleanup(inner.CloseIdleConnections)
	return srv.URL, inner
}

package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
)

// leaserFunc is a Leaser made of a function.
type leaserFunc func(context.Context, string, ratelimit.LeaseCall) (ratelimit.Lease, error)

func (f leaserFunc) TakeQuota(ctx context.Context, key string, c ratelimit.LeaseCall) (ratelimit.Lease, error) {
	return f(ctx, key, c)
}

// A SharedPacer paces a fleet as one client: once a response showed a
// quota, each request takes a permit from a lease its leaser (Redis, in
// the redisquota module) granted. Here the fleet's quota is spent and the
// leaser gives this process slots from 5 s on, one every 100 ms.
func ExampleSharedPacer() {
	leaser := leaserFunc(func(_ context.Context, key string, c ratelimit.LeaseCall) (ratelimit.Lease, error) {
		return ratelimit.Lease{Count: c.Want, Start: 5 * time.Second, Interval: 100 * time.Millisecond, TTL: time.Minute}, nil
	})
	p := &ratelimit.SharedPacer{Leaser: leaser}
	now := time.Now()
	p.Observe("api.example.gov", "items", ratelimit.Quota{Remaining: 10, Reset: 30 * time.Second}, now, now)
	for range 3 {
		h := p.Hold("api.example.gov", "items", now, time.Minute)
		fmt.Println(h.Wait.Round(50*time.Millisecond), h.Spaced)
	}
	// Output:
	// 5s true
	// 5.1s true
	// 5.2s true
}

// A pacer holds the requests that draw a spent quota until its reset, and
// nothing else: here GitHub's search bucket, spent for ten seconds.
func ExamplePacer() {
	var p ratelimit.Pacer
	now := time.Unix(1_800_000_000, 0)
	h := http.Header{"X-Ratelimit-Resource": {"search"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1800000010"}}
	q, _ := ratelimit.Parse(h, now)
	p.Observe("api.github.com", ratelimit.Route("/search/issues"), q, now, now)

	search := p.Hold("api.github.com", ratelimit.Route("/search/code"), now, time.Minute)
	core := p.Hold("api.github.com", ratelimit.Route("/repos/o/r"), now, time.Minute)
	fmt.Println(q.Name, search.Wait, core.Wait)
	// Output: search 10s 0s
}

// A 403 is a rate limit when its rate-limit fields say so; a Retry-After
// alone, or nothing, is a refusal.
func ExampleIsRateLimit() {
	secondary := &http.Response{StatusCode: 403, Header: http.Header{"Retry-After": {"60"}, "X-Ratelimit-Remaining": {"4990"}}}
	blocked := &http.Response{StatusCode: 403, Header: http.Header{"Retry-After": {"3600"}}}
	plain := &http.Response{StatusCode: 403, Header: http.Header{}}
	fmt.Println(ratelimit.IsRateLimit(secondary), ratelimit.IsRateLimit(blocked), ratelimit.IsRateLimit(plain))
	// Output: true false false
}

// Parse reads what a response says of its quota, in any of the forms
// services send; the tightest quota counts.
func ExampleParse() {
	now := time.Unix(1_800_000_000, 0)
	h := http.Header{
		"Ratelimit":        {`"burst";r=5;t=1, "day";r=0;t=3600`},
		"Ratelimit-Policy": {`"burst";q=10;w=1, "day";q=5000;w=86400`},
	}
	q, ok := ratelimit.Parse(h, now)
	fmt.Println(ok, q.Name, q.Remaining, q.Reset, q.Limit, q.Window)

	github := http.Header{"X-Ratelimit-Remaining": {"4987"}, "X-Ratelimit-Reset": {"1800000600"}}
	q, _ = ratelimit.Parse(github, now)
	fmt.Println(q.Remaining, q.Reset, q.ResetUnix)
	// Output:
	// true day 0 1h0m0s 5000 24h0m0s
	// 4987 10m0s true
}

// A harvest's ETA from the windows a response announced: 20 requests per
// 10 s and 100 per minute, both full, leave 2,000 requests 19 minutes and
// 40 seconds of work; a measured rate slower than that counts instead.
func ExamplePacer_ETA() {
	var p ratelimit.Pacer
	h := http.Header{
		"Ratelimit":        {`"burst";r=20;t=10, "hourly";r=100;t=60`},
		"Ratelimit-Policy": {`"burst";q=20;w=10, "hourly";q=100;w=60`},
	}
	now := time.Now()
	for _, q := range ratelimit.Windows(h, now) {
		p.Observe("api.example.gov", "items", q, now, now)
	}
	fmt.Println(p.ETA("api.example.gov", "items", 2000, 0, now))
	fmt.Println(p.ETA("api.example.gov", "items", 2000, 1.5, now))
	// Output:
	// 19m40s
	// 22m13.333333333s
}

package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
)

// leaserFunc is a QuotaLeaser made of a function.
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

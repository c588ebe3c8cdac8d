package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
)

// A store that keeps answering with the planted hold, whatever it is
// told, is not believed past the API's own reset and MaxRetryAfter.
func TestStoredHoldBoundedByTheAPI(t *testing.T) {
	far := ratelimit.Lease{Count: 1, Start: 23 * time.Hour, TTL: time.Second}
	sp := &ratelimit.SharedPacer{Leaser: leaserFunc(func(context.Context, string, ratelimit.LeaseCall) (ratelimit.Lease, error) {
		return far, nil
	})}
	now := time.Now()
	sp.Observe("h", "", ratelimit.Quota{Remaining: 500, Reset: time.Minute}, now, now)
	for range 5 {
		if h := sp.Hold("h", "", time.Now(), time.Minute); h.Wait > 0 || h.Refused {
			t.Fatalf("hold %+v from a store 23h past the API's reset; want none", h)
		}
	}
}

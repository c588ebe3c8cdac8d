package ratelimit_test

import (
	"net/http"
	"testing"

	"github.com/steadyhttp/steady/ratelimit"
)

// A 403 is a rate limit only when rate-limit fields say so: a spent quota
// in any form, or a Retry-After beside quota fields (GitHub's secondary
// limits, sent with its x-ratelimit-* fields). A firewall's block with a
// Retry-After and nothing else is a refusal.
func TestIsRateLimitForbidden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		status int
		h      http.Header
		want   bool
	}{
		{"429", 429, http.Header{}, true},
		{"plain 403", 403, http.Header{}, false},
		{"WAF block with Retry-After", 403, http.Header{"Retry-After": {"3600"}}, false},
		{"WAF block with a date", 403, http.Header{"Retry-After": {"Wed, 21 Oct 2037 07:28:00 GMT"}}, false},
		{"GitHub primary, spent", 403, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1800000000"}}, true},
		{"GitHub secondary", 403, http.Header{"Retry-After": {"60"}, "X-Ratelimit-Limit": {"5000"},
			"X-Ratelimit-Remaining": {"4990"}, "X-Ratelimit-Reset": {"1800000000"}, "X-Ratelimit-Resource": {"core"}}, true},
		{"secondary with only the used count", 403, http.Header{"Retry-After": {"60"}, "X-Ratelimit-Used": {"10"}}, true},
		{"draft, spent", 403, http.Header{"Ratelimit": {`"default";r=0;t=30`}}, true},
		{"draft split fields, spent", 403, http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"30"}}, true},
		{"Retry-After with a policy", 403, http.Header{"Retry-After": {"30"}, "Ratelimit-Policy": {`"default";q=100;w=60`}}, true},
		{"quota to spare, no Retry-After", 403, http.Header{"X-Ratelimit-Remaining": {"10"}, "X-Ratelimit-Reset": {"7"}}, false},
		{"401 with fields", 401, http.Header{"X-Ratelimit-Remaining": {"0"}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := ratelimit.IsRateLimit(&http.Response{StatusCode: c.status, Header: c.h}); got != c.want {
				t.Errorf("IsRateLimit(%d %v) = %v; want %v", c.status, c.h, got, c.want)
			}
		})
	}
}

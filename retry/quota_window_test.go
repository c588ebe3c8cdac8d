package retry

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// xQuota reads an X-RateLimit response as the transport does for its own
// pacer, through the window cache, and returns the quota read, whether
// its limit field was read, and whether the pacer counts it the opener of
// its window.
func xQuota(c *windowCache, h http.Header, host, route string, now time.Time) (q quotaPick, limitRead, opener bool) {
	f, _ := lookupQuota(h)
	pickQuota(&f, now, &q)
	if q.limit != "" && !f.ietf() {
		c.settleLimit(&f, &q, host, route, &now)
	}
	settleQuota(&f, nil, &q, false)
	limitRead = q.q.Limit > 0 // every limit here is positive
	return q, limitRead, q.q.Reset > 0 && q.q.Limit > 0 && q.q.Remaining == q.q.Limit-1
}

func xHeader(remaining, limit int64, reset string) http.Header {
	return http.Header{"X-Ratelimit-Remaining": {strconv.FormatInt(remaining, 10)},
		"X-Ratelimit-Limit": {strconv.FormatInt(limit, 10)}, "X-Ratelimit-Reset": {reset}}
}

// ADR 0212: the limit of X-RateLimit fields alone is read only when it may
// tell that the response opened its window.
func TestWindowCacheReadsTheLimitOnlyWhenItMayTell(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s1, s2 := "1800000060", "1800000120"
	var c windowCache
	steps := []struct {
		name        string
		h           http.Header
		host, route string
		at          time.Time
		read        bool
	}{
		{"no reset: it opens nothing", http.Header{"X-Ratelimit-Remaining": {"4"}, "X-Ratelimit-Limit": {"5"}}, "api", "a", now, false},
		{"a reset in the past: not said", xHeader(4, 5, "1799999990"), "api", "a", now, false},
		{"a delay: read as before", xHeader(4, 5, "30"), "api", "a", now, true},
		{"a window not seen", xHeader(3, 5, s1), "api", "a", now, true},
		{"the same window", xHeader(2, 5, s1), "api", "a", now, false},
		{"the same window, saying its limit less one", xHeader(4, 5, s1), "api", "a", now, true},
		{"the same window, spent", xHeader(0, 5, s1), "api", "a", now, false},
		{"another route", xHeader(2, 5, s1), "api", "b", now, true},
		{"another host", xHeader(2, 5, s1), "other", "a", now, true},
		{"another window", xHeader(2, 5, s2), "api", "a", now, true},
		// The window kept stays until its second passed: the others above
		// did not replace it.
		{"the window kept", xHeader(1, 5, s1), "api", "a", now, false},
		{"the next window, once the kept one passed", xHeader(3, 5, s2), "api", "a", now.Add(61 * time.Second), true},
		{"the next window, now kept", xHeader(2, 5, s2), "api", "a", now.Add(61 * time.Second), false},
	}
	for _, s := range steps {
		q, read, _ := xQuota(&c, s.h, s.host, s.route, s.at)
		if !q.ok {
			t.Fatalf("%s: no quota read from %v", s.name, s.h)
		}
		if read != s.read {
			t.Errorf("%s: limit read %v, want %v", s.name, read, s.read)
		}
	}
}

// Whatever the order of responses, over hosts, routes and windows, the
// window cache tells the pacer the same openers as reading every limit
// does, as long as a window of a host and route has one limit.
func TestWindowCacheTellsTheSameOpeners(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var c windowCache
	base := time.Unix(1_800_000_000, 0)
	skipped := 0
	for i := range 20000 {
		now := base.Add(time.Duration(i) * 37 * time.Millisecond)
		host, route := []string{"api", "other"}[r.IntN(2)], []string{"a", "b", "c"}[r.IntN(3)]
		// Windows of 3 s by host and route, with a limit of their own.
		second := now.Unix() + 1 + r.Int64N(3)
		limit := 3 + (second+int64(len(host))+int64(route[0]))%4
		remaining := r.Int64N(limit + 1)
		h := xHeader(remaining, limit, strconv.FormatInt(second, 10))
		q, read, opener := xQuota(&c, h, host, route, now)
		want := remaining == limit-1
		if opener != want {
			t.Fatalf("step %d: %s %s %v at %v: opener %v, reading the limit says %v", i, host, route, h, now, opener, want)
		}
		if q.q.Remaining != remaining {
			t.Fatalf("step %d: remaining %d, want %d", i, q.q.Remaining, remaining)
		}
		if !read {
			skipped++
		}
	}
	if skipped == 0 {
		t.Error("the cache never spared a limit")
	}
}

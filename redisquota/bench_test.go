package redisquota_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// BenchmarkAddedLatency sends requests to a loopback API with rate-limit
// headers on every response, alternating, request by request, a transport
// that paces and budgets alone and one that shares both through Redis, so
// the two see the same machine. It reports each one's median and 99th
// percentile, and the difference at the 99th.
func BenchmarkAddedLatency(b *testing.B) {
	srv := startRedis(b)
	p := open(b, srv.URL("bench"))
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"default";q=1000000;w=3600`)
		w.Header().Set("RateLimit", `"default";r=999999;t=3600`)
	}))
	defer api.Close()
	local := retry.New(nil, retry.Policy{Pacer: new(ratelimit.Pacer), Budget: &budget.Budget{}})
	shared := retry.New(nil, retry.Policy{Pacer: &ratelimit.SharedPacer{Leaser: p.store}, Budget: &budget.Budget{Store: p.store}})
	defer local.CloseIdleConnections()
	defer shared.CloseIdleConnections()
	var tl, ts []time.Duration
	send := func(tr http.RoundTripper, into *[]time.Duration) {
		req, _ := http.NewRequest(http.MethodGet, api.URL, nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		*into = append(*into, time.Since(start))
	}
	send(local, &tl) // warm both connections and the script cache
	send(shared, &ts)
	tl, ts = tl[:0], ts[:0]
	calls := p.calls.Load()
	for b.Loop() {
		send(local, &tl)
		send(shared, &ts)
	}
	q := func(d []time.Duration, f float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(f*float64(len(s)-1))].Microseconds())
	}
	b.ReportMetric(q(tl, 0.5), "local-p50-µs")
	b.ReportMetric(q(ts, 0.5), "shared-p50-µs")
	b.ReportMetric(q(tl, 0.99), "local-p99-µs")
	b.ReportMetric(q(ts, 0.99), "shared-p99-µs")
	b.ReportMetric(q(ts, 0.99)-q(tl, 0.99), "added-p99-µs")
	b.ReportMetric(float64(p.calls.Load()-calls)/float64(len(ts)), "redis-calls/req")
}

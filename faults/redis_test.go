package faults_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/redisquota"
	"github.com/steadyhttp/steady/redisquota/redistest"
	"github.com/steadyhttp/steady/retry"
)

// Redis slow: with two seconds of latency on every reply from Redis, the
// store's calls run out of their short deadline, the store is reported
// lost once, and a hundred requests finish in less time than one slow
// reply would take; once the latency is gone the process rejoins.
func TestRedisSlow(t *testing.T) {
	srv := redistest.Start(t)
	cl := toxiproxyClient(t)
	p, err := cl.CreateProxy("redis-slow", "127.0.0.1:0", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Delete()
	store, client, err := redisquota.Open("redis://" + p.Listen + "/0?name=slow")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var mu sync.Mutex
	var changes []error
	store.OnChange = func(err error) {
		mu.Lock()
		changes = append(changes, err)
		mu.Unlock()
	}
	heard := func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), changes...)
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Remaining", "100000")
		w.Header().Set("X-RateLimit-Reset", "3600")
	}))
	defer api.Close()
	tr := retry.New(nil, retry.Policy{Pacer: &ratelimit.SharedPacer{Leaser: store}, Budget: &budget.Budget{Store: store}})
	defer tr.CloseIdleConnections()
	send := func(n int, tag string) {
		t.Helper()
		for i := range n {
			req, _ := http.NewRequest(http.MethodGet, api.URL+"/"+tag+strconv.Itoa(i), nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	send(50, "warm") // the store answers
	// A healthy store may miss a deadline on a loaded machine (each such
	// loss is a timeout, and rejoins): wait until it answers, then count
	// changes from there.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; len(heard())%2 == 1; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("the store never answered before the latency: changes %v", heard())
		}
		send(1, "settle"+strconv.Itoa(i))
		time.Sleep(10 * time.Millisecond) // pace the loop; the bound above ends it
	}
	base := len(heard())
	const latency = 2 * time.Second
	if _, err := p.AddToxic("latency", "latency", "downstream", 1, map[string]any{"latency": latency.Milliseconds()}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	send(100, "slow")
	if took := time.Since(start); took >= latency {
		t.Errorf("100 requests took %v with the store %v slow; some request waited for it", took, latency)
	}
	got := heard()[base:]
	var ne net.Error
	if len(got) != 1 || got[0] == nil || !(errors.Is(got[0], context.DeadlineExceeded) || errors.As(got[0], &ne) && ne.Timeout()) {
		t.Fatalf("changes %v; want one timeout", got)
	}
	if err := p.RemoveToxic("latency"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(15 * time.Second)
	for i := 0; len(heard()) < base+2; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("not rejoined 15s after the latency was removed; changes %v", heard())
		}
		send(1, "back"+strconv.Itoa(i))
		time.Sleep(10 * time.Millisecond) // pace the loop; the bound above ends it
	}
	if got := heard()[base:]; got[1] != nil {
		t.Errorf("second change %v; want the rejoin", got[1])
	}
}

package redisquota_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// flakyAPI answers 200 with a generous quota, and a 503 to every twentieth
// request, so re-sends draw on the budget.
func flakyAPI(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		w.Header().Set("X-RateLimit-Remaining", strconv.FormatInt(1_000_000-i, 10))
		w.Header().Set("X-RateLimit-Reset", "3600")
		if i%20 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(api.Close)
	return api, &n
}

func sharedTransport(p *process) *retry.Transport {
	return retry.New(nil, retry.Policy{Pacer: &ratelimit.SharedPacer{Leaser: p.store}, Budget: &budget.Budget{Store: p.store},
		InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
}

// Redis unreachable at start: one warning, every request answered on local
// state, and no request waits on the store more than once a second.
func TestRedisUnreachableAtStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens here now
	p := open(t, "redis://"+addr+"/0?name=gone")
	api, _ := flakyAPI(t)
	tr := sharedTransport(p)
	defer tr.CloseIdleConnections()
	for i := range 200 {
		mustGet(t, tr, api.URL+"/"+strconv.Itoa(i))
	}
	heard := p.heard()
	if len(heard) != 1 || heard[0] == nil {
		t.Fatalf("store changes %v; want one warning", heard)
	}
}

// Redis killed mid-run, under two processes: the request after the kill
// falls back, each process warns once, nothing is lost; once Redis is back
// both rejoin and the shared state fills again.
func TestRedisKilledMidRunAndBack(t *testing.T) {
	srv := startRedis(t)
	api, _ := flakyAPI(t)
	ps := []*process{open(t, srv.URL("kill")), open(t, srv.URL("kill"))}
	trs := make([]*retry.Transport, len(ps))
	for i, p := range ps {
		trs[i] = sharedTransport(p)
		defer trs[i].CloseIdleConnections()
	}
	// send makes n requests from each process, alternating.
	send := func(n int, tag string) {
		t.Helper()
		for i := range n {
			for j, tr := range trs {
				mustGet(t, tr, api.URL+"/"+tag+strconv.Itoa(j)+"-"+strconv.Itoa(i))
			}
		}
	}
	send(100, "a")
	if len(keys(t, srv)) == 0 {
		t.Fatal("no shared state while Redis was up")
	}
	// A healthy store may miss a deadline on a loaded machine and rejoin;
	// changes are counted from a moment every process is sharing.
	up := func() bool {
		for _, p := range ps {
			if len(p.heard())%2 == 1 {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; !up(); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("not sharing before the kill: %v, %v", ps[0].heard(), ps[1].heard())
		}
		send(1, "s"+strconv.Itoa(i)+"-")
		time.Sleep(10 * time.Millisecond) // pace the loop; the bound above ends it
	}
	base := []int{len(ps[0].heard()), len(ps[1].heard())}
	srv.Kill()
	send(100, "b")
	for j, p := range ps {
		if heard := p.heard()[base[j]:]; len(heard) != 1 || heard[0] == nil {
			t.Fatalf("process %d: store changes %v after the kill; want one warning", j, heard)
		}
	}
	srv.Restart()
	// The store is tried again a second after it failed; keep working
	// until both have rejoined and the budget and quota are back, within a
	// bound.
	rejoined := func() bool {
		for j, p := range ps {
			if len(p.heard()) < base[j]+2 {
				return false
			}
		}
		return len(keys(t, srv)) >= 2
	}
	deadline = time.Now().Add(10 * time.Second)
	for i := 0; !rejoined(); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("not rejoined 10s after Redis came back; changes %v, %v; keys %v", ps[0].heard(), ps[1].heard(), keys(t, srv))
		}
		send(1, "c"+strconv.Itoa(i)+"-")
		time.Sleep(10 * time.Millisecond) // pace the loop; the bound above ends it
	}
	for j, p := range ps {
		if heard := p.heard()[base[j]:]; heard[1] != nil {
			t.Errorf("process %d: changes %v; want one warning, then the rejoin", j, heard)
		}
	}
}

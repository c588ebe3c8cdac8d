package steady_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/retry"
)

// overloadWait is the wait a refusal carries, read as fan-out and the
// command read it; -1 when err has none.
func overloadWait(err error) time.Duration {
	var h interface{ RetryAfter() time.Duration }
	if errors.As(err, &h) {
		return h.RetryAfter()
	}
	return -1
}

// answer is a fake response with status code and a JSON body.
func answer(r *http.Request, code int) *http.Response {
	return &http.Response{StatusCode: code, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{}`)), ContentLength: 2, Request: r}
}

// changes records the breaker's events a client reports.
type changes struct {
	mu sync.Mutex
	ev []event.Event
}

func (c *changes) Report(e event.Event) {
	if e.Kind != event.BreakerChanged {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ev = append(c.ev, e)
}

func (c *changes) reasons() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.ev {
		out = append(out, e.Host+" "+e.Reason)
	}
	return out
}

// One host down never slows a call to another: with one server's circuit
// open and the attempts it allows all hanging, calls to a second server
// are sent at once, each one attempt without a wait.
func TestOverloadIsPerHost(t *testing.T) {
	release := make(chan struct{})
	var downHits atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if downHits.Add(1) > 2 {
			<-release // the next attempts hang, holding the host's slots
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	defer close(release)
	var upHits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upHits.Add(1)
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	rec := &changes{}
	c := newClient(t, steady.Options{Concurrency: 2, Reporter: rec,
		Policy:   retry.Policy{MaxAttempts: 1},
		Overload: breaker.Config{MinRequests: 2}})
	ctx := context.Background()
	for range 2 {
		if err := c.GetJSON(ctx, down.URL, nil, new(any)); err == nil {
			t.Fatal("a 503 passed")
		}
	}
	err := c.GetJSON(ctx, down.URL, nil, new(any))
	if !errors.Is(err, breaker.ErrOpen) || !errors.Is(err, retry.ErrOverload) || overloadWait(err) <= 0 {
		t.Fatalf("call to the open host: %v (wait %v), want ErrOpen with a wait", err, overloadWait(err))
	}
	if got := downHits.Load(); got != 2 {
		t.Errorf("the open host got %d requests, want the 2 that opened it", got)
	}
	for i := range 20 {
		ctx, out := retry.WithOutcome(ctx)
		if err := c.GetJSON(ctx, up.URL, nil, new(any)); err != nil {
			t.Fatalf("call %d to the healthy host: %v", i, err)
		}
		if out.Attempts != 1 || out.Waited != 0 || out.Stop != nil {
			t.Errorf("call %d to the healthy host: %+v, want one attempt and no wait", i, *out)
		}
	}
	if got := rec.reasons(); len(got) != 1 || !strings.HasSuffix(got[0], " open") || !strings.HasPrefix(got[0], strings.TrimPrefix(down.URL, "http://")) {
		t.Errorf("breaker events = %q, want the down host's opening alone", got)
	}
}

// A half-open host meets a burst of 1,000 goroutines: the probe is the
// only request that reaches it, every other call fails fast with ErrOpen,
// and the probe's success closes the circuit for the calls after it.
func TestOverloadHalfOpenFlood(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	var hits atomic.Int32
	probeIn, releaseProbe := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if r.URL.Path == "/probe" {
			close(probeIn)
			<-releaseProbe
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	// An open delay of a nanosecond: the circuit is half-open at the next
	// call, without the test waiting for it.
	c := newClient(t, steady.Options{BaseURL: srv.URL, Concurrency: 64,
		Policy:   retry.Policy{MaxAttempts: 1},
		Overload: breaker.Config{MinRequests: 1, OpenDelay: time.Nanosecond}})
	ctx := context.Background()
	if err := c.GetJSON(ctx, "/", nil, new(any)); err == nil {
		t.Fatal("the 503 that opens the circuit passed")
	}
	failing.Store(false)
	hits.Store(0)
	probe := make(chan error, 1)
	go func() { probe <- c.GetJSON(ctx, "/probe", nil, new(any)) }()
	<-probeIn

	const flood = 1000
	var wg sync.WaitGroup
	var refused atomic.Int32
	for range flood {
		wg.Go(func() {
			err := c.GetJSON(ctx, "/", nil, new(any))
			if errors.Is(err, breaker.ErrOpen) && overloadWait(err) > 0 {
				refused.Add(1)
			} else {
				t.Errorf("a call of the flood: %v, want ErrOpen with a wait", err)
			}
		})
	}
	wg.Wait()
	if got := hits.Load(); got != 1 {
		t.Errorf("the half-open host got %d requests during the flood, want the 1 probe", got)
	}
	if got := refused.Load(); got != flood {
		t.Errorf("%d of %d calls refused", got, flood)
	}
	close(releaseProbe)
	if err := <-probe; err != nil {
		t.Fatalf("probe: %v", err)
	}
	if err := c.GetJSON(ctx, "/", nil, new(any)); err != nil {
		t.Errorf("call after the probe closed the circuit: %v", err)
	}
}

// An outage under steady load, in virtual time: 50 callers call every
// 100ms; the host answers 503 for 30s, then recovers. With the facade's
// defaults the attempts during the outage are a small share of the calls
// (a no-retry client would send one attempt a call), the refused calls
// fail fast with ErrOpen and a wait, and once the host is back every call
// passes again within two of the circuit's windows.
func TestOverloadOutageUnderLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		outage := 30 * time.Second
		var attempts atomic.Int64
		fake := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if time.Since(start) < outage {
				attempts.Add(1)
				return answer(r, 503), nil
			}
			return answer(r, 200), nil
		})
		c := newClient(t, steady.Options{BaseURL: "https://api.example.gov", Transport: fake})
		const callers, every, run = 50, 100 * time.Millisecond, 3 * time.Minute
		var calls, openRefusals, badWaits atomic.Int64
		var lastFailure atomic.Int64 // virtual nanoseconds since start
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for time.Since(start) < run {
					at := time.Since(start)
					err := c.GetJSON(context.Background(), "/items", nil, new(any))
					if at < outage {
						calls.Add(1)
					}
					if err != nil {
						lastFailure.Store(int64(time.Since(start)))
						if errors.Is(err, breaker.ErrOpen) {
							openRefusals.Add(1)
							if overloadWait(err) <= 0 {
								badWaits.Add(1)
							}
						}
					}
					time.Sleep(every)
				}
			})
		}
		wg.Wait()
		t.Logf("outage: %d calls, %d attempts, %d refused by the open circuit; last failure at %v",
			calls.Load(), attempts.Load(), openRefusals.Load(), time.Duration(lastFailure.Load()))
		if got, limit := attempts.Load(), calls.Load()*12/10; got > limit {
			t.Errorf("%d attempts during the outage, over 1.2x the %d calls", got, calls.Load())
		}
		if openRefusals.Load() == 0 || badWaits.Load() != 0 {
			t.Errorf("%d calls refused by an open circuit, %d of them without a wait", openRefusals.Load(), badWaits.Load())
		}
		if last := time.Duration(lastFailure.Load()); last > outage+2*time.Minute {
			t.Errorf("calls still failed at %v, over two windows after the recovery at %v", last, outage)
		}
	})
}

// A host that answers 429 without quota fields when more than 4 requests
// are in flight: AIMD brings the client's concurrency down to about what
// the host takes, and the fan-out completes. 429s never open the circuit.
func TestOverloadHeaderless429sBringConcurrencyDown(t *testing.T) {
	for _, off := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			const limit, items = 4, 400
			var inFlight, served, refused atomic.Int64
			var lateMost atomic.Int64 // most in flight once half the items are served
			fake := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				if served.Load() > items/2 && n > lateMost.Load() {
					lateMost.Store(n)
				}
				time.Sleep(20 * time.Millisecond)
				if n > limit {
					refused.Add(1)
					return answer(r, 429), nil
				}
				served.Add(1)
				return answer(r, 200), nil
			})
			rec := &changes{}
			c := newClient(t, steady.Options{BaseURL: "https://api.example.gov", Transport: fake, Reporter: rec,
				NoOverload: off, Policy: retry.Policy{MaxAttempts: 10}})
			start := time.Now()
			err := c.FanOut(context.Background(), items, func(ctx context.Context, i int) error {
				return c.GetJSON(ctx, "/items", nil, new(any))
			})
			t.Logf("overload control off %v: %v, %d 429s, most in flight late %d, in %v",
				off, err, refused.Load(), lateMost.Load(), time.Since(start))
			if off {
				return
			}
			if err != nil {
				t.Fatalf("fan-out: %v", err)
			}
			// AIMD probes one above the host's limit, then halves.
			if got := lateMost.Load(); got > limit+2 {
				t.Errorf("%d in flight at the host late in the run, want AIMD to keep it near %d", got, limit)
			}
			for _, r := range rec.reasons() {
				if !strings.HasSuffix(r, " limit") {
					t.Errorf("breaker event %q: 429s change the limit, never the circuit", r)
				}
			}
		})
	}
}

// 429s are quota, not failure: a host that answers nothing but 429s
// without headers for 200 calls is still sent the next call, which
// passes once the host does.
func TestOverload429sNeverOpenTheCircuit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var limited atomic.Bool
		limited.Store(true)
		fake := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if limited.Load() {
				return answer(r, 429), nil
			}
			return answer(r, 200), nil
		})
		rec := &changes{}
		c := newClient(t, steady.Options{BaseURL: "https://api.example.gov", Transport: fake, Reporter: rec,
			Policy: retry.Policy{MaxAttempts: 1}})
		for i := range 200 {
			err := c.GetJSON(context.Background(), "/items", nil, new(any))
			var rl *steady.RateLimitError
			if !errors.As(err, &rl) || errors.Is(err, breaker.ErrOpen) || errors.Is(err, breaker.ErrThrottled) {
				t.Fatalf("call %d: %v, want the 429 itself", i, err)
			}
		}
		limited.Store(false)
		if err := c.GetJSON(context.Background(), "/items", nil, new(any)); err != nil {
			t.Errorf("call after the 429s: %v", err)
		}
		for _, r := range rec.reasons() {
			if !strings.HasSuffix(r, " limit") {
				t.Errorf("breaker event %q after 429s alone", r)
			}
		}
	})
}

// NoOverload turns it off: an outage is sent every call, as before.
func TestOverloadOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hits atomic.Int32
		fake := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			hits.Add(1)
			return answer(r, 503), nil
		})
		c := newClient(t, steady.Options{BaseURL: "https://api.example.gov", Transport: fake,
			NoOverload: true, Policy: retry.Policy{MaxAttempts: 1}})
		for range 100 {
			if err := c.GetJSON(context.Background(), "/", nil, new(any)); errors.Is(err, retry.ErrOverload) {
				t.Fatalf("refused with overload control off: %v", err)
			}
		}
		if got := hits.Load(); got != 100 {
			t.Errorf("%d requests sent, want 100", got)
		}
		on := c.With(func(o *steady.Options) { o.NoOverload = false })
		for range 100 {
			on.GetJSON(context.Background(), "/", nil, new(any))
		}
		if got := hits.Load(); got >= 200 {
			t.Errorf("a copy with overload control on sent all %d", got-100)
		}
	})
}

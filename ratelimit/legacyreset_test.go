package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/ratelimit"
)

// secondLimiter is a fixed-window rate limiter that names its resets in
// whole Unix seconds, rounded up, as express-rate-limit's legacy
// X-RateLimit-Reset does. Its windows begin at their first request
// (express-rate-limit's memory store), or, with clock set, on multiples of
// the window since the Unix epoch. A request over the limit is refused
// with a 429 and a Retry-After.
type secondLimiter struct {
	limit   int
	window  time.Duration
	clock   bool
	latency time.Duration // each way

	mu      sync.Mutex
	end     time.Time // the current window's end
	used    int
	served  int
	refused int
}

func (l *secondLimiter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(l.latency)
	defer time.Sleep(l.latency)
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !now.Before(l.end) {
		l.end, l.used = now.Add(l.window), 0
		if l.clock {
			w := l.window.Nanoseconds()
			l.end = time.Unix(0, (now.UnixNano()/w+1)*w)
		}
	}
	l.used++
	reset := l.end.Unix()
	if l.end.After(time.Unix(reset, 0)) {
		reset++
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(l.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(l.limit-l.used, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
	if l.used > l.limit {
		l.refused++
		h.Set("Retry-After", strconv.FormatInt(reset-now.Unix(), 10))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	l.served++
}

// think is the time a client takes between deciding to send a request and
// sending it: a wake at a whole second sends a little after it.
const think = 5 * time.Millisecond

// wake is one hold a client served: when it woke, and the reset second the
// last response before it named.
type wake struct {
	at, named time.Time
}

// paced sends n requests one after another to l through p, as the retry
// transport does (Hold, wait, send, Observe; a 429 re-sent after its
// Retry-After), and returns the holds it served.
func paced(t *testing.T, p *ratelimit.Pacer, l *secondLimiter, n int) []wake {
	t.Helper()
	var wakes []wake
	var named time.Time
	for range n {
		for {
			h := p.Hold("api", "items", time.Now(), time.Minute)
			if h.Refused {
				t.Fatalf("hold refused: %+v", h)
			}
			if h.Wait > 0 {
				time.Sleep(h.Wait)
				wakes = append(wakes, wake{time.Now(), named})
			}
			time.Sleep(think)
			sent := time.Now()
			rec := httptest.NewRecorder()
			l.ServeHTTP(rec, httptest.NewRequest("GET", "http://api/items", nil))
			now := time.Now()
			q, ok := ratelimit.Parse(rec.Header(), now)
			if !ok {
				t.Fatalf("no quota in %v", rec.Header())
			}
			named = now.Add(q.Reset)
			p.Observe("api", "items", q, sent, now)
			if rec.Code != http.StatusTooManyRequests {
				break
			}
			after, _ := strconv.Atoi(rec.Header().Get("Retry-After"))
			time.Sleep(time.Duration(after) * time.Second)
		}
	}
	return wakes
}

// Against a limiter whose windows reset on clock seconds, the pacer probes
// one window's last unit before the named second, learns from its answer
// (the same window) that the named second is the reset, and from then on
// wakes at it: no request is refused.
func TestPacerWaitsForTheNamedSecondOfAClockLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(300 * time.Millisecond) // windows begin inside a second
		l := &secondLimiter{limit: 20, window: 2 * time.Second, clock: true, latency: time.Millisecond}
		var p ratelimit.Pacer
		wakes := paced(t, &p, l, 101)
		if l.refused != 0 || l.served != 101 {
			t.Fatalf("served %d, refused %d; want 101 served, none refused", l.served, l.refused)
		}
		early := 0
		for i, w := range wakes {
			switch {
			case w.at.Before(w.named):
				early++ // the probe
			case !w.at.Equal(w.named):
				t.Errorf("hold %d woke at %v, after the named second %v", i, w.at, w.named)
			}
		}
		if early != 1 {
			t.Errorf("%d holds woke before the named second; want the one probe: %v", early, wakes)
		}
	})
}

// Against a limiter whose windows begin at their first request, the probe
// of the first window opens a new window before the named second, and the
// pacer wakes every later window at its refined end (the first response's
// instant plus the window's whole seconds), not at the second after it
// the field names: the walk takes no more than 1.01x the quota's floor,
// with nothing refused.
func TestPacerRefinesTheResetOfAFirstRequestLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(300 * time.Millisecond)
		l := &secondLimiter{limit: 20, window: 2 * time.Second, latency: time.Millisecond}
		var p ratelimit.Pacer
		start := time.Now()
		const n = 101
		wakes := paced(t, &p, l, n)
		elapsed := time.Since(start)
		if l.refused != 0 || l.served != n {
			t.Fatalf("served %d, refused %d; want %d served, none refused", l.served, l.refused, n)
		}
		for i, w := range wakes {
			if !w.at.Before(w.named) {
				t.Errorf("hold %d woke at %v, not before the named second %v", i, w.at, w.named)
			}
		}
		// The first window gives one unit to the probe, which opens the
		// second: the walk still needs n/limit windows after the first.
		floor := time.Duration((n-1)/l.limit) * l.window
		t.Logf("%d requests in %v: %.4fx the floor of %v", n, elapsed, elapsed.Seconds()/floor.Seconds(), floor)
		if elapsed > floor*101/100 {
			t.Errorf("%d requests took %v; want at most 1.01x the floor of %v", n, elapsed, floor)
		}
	})
}

// A wrong guess costs nothing: a limiter whose windows last a fraction of a
// second past whole seconds is never woken early, so nothing is refused.
func TestPacerProbeOfAFractionalWindowRefusesNothing(t *testing.T) {
	for _, window := range []time.Duration{1500 * time.Millisecond, 2700 * time.Millisecond, 1100 * time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			time.Sleep(300 * time.Millisecond)
			l := &secondLimiter{limit: 10, window: window, latency: 3 * time.Millisecond}
			var p ratelimit.Pacer
			paced(t, &p, l, 101)
			if l.refused != 0 {
				t.Errorf("window %v: %d refused", window, l.refused)
			}
		})
	}
}

// Many goroutines held at a window down to one unit: exactly one of them
// gets the probe's slot at the refined instant, the rest wait for the named
// second, as when the window is spent.
func TestPacerGivesOneProbeAtATime(t *testing.T) {
	t.Parallel()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	unix := func(remaining int64, named, now float64) ratelimit.Quota {
		return ratelimit.Quota{Remaining: remaining, Limit: 20, Reset: at(named).Sub(at(now)), ResetUnix: true}
	}
	var p ratelimit.Pacer
	p.Observe("api", "", unix(19, 13, 10.31), at(10.3), at(10.31)) // refined: 10.31 + 2s
	p.Observe("api", "", unix(1, 13, 10.6), at(10.59), at(10.6))
	const n = 16
	waits := make(chan time.Duration, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { waits <- p.Hold("api", "", at(10.6), time.Minute).Wait })
	}
	wg.Wait()
	close(waits)
	probes, named := 0, 0
	for w := range waits {
		switch w {
		case 1710 * time.Millisecond:
			probes++
		case 2400 * time.Millisecond:
			named++
		default:
			t.Errorf("a hold of %v; want the probe's 1.71s or the named second's 2.4s", w)
		}
	}
	if probes != 1 || named != n-1 {
		t.Errorf("%d probes and %d holds to the named second; want 1 and %d", probes, named, n-1)
	}
	// The probe's answer from the same window: the limiter resets on the
	// named second, and the next window is neither probed nor refined.
	p.Observe("api", "", unix(0, 13, 12.33), at(12.32), at(12.33))
	if h := p.Hold("api", "", at(12.4), time.Minute); h.Wait != 600*time.Millisecond {
		t.Errorf("after the probe: held %v, want 0.6s to the named second", h.Wait)
	}
	p.Observe("api", "", unix(19, 15, 13.01), at(13), at(13.01))
	p.Observe("api", "", unix(1, 15, 13.5), at(13.49), at(13.5))
	if h := p.Hold("api", "", at(13.5), time.Minute); h.Wait != 0 {
		t.Errorf("a clock limiter's last unit held %v; want it sent at once", h.Wait)
	}
	p.Observe("api", "", unix(0, 15, 13.6), at(13.59), at(13.6))
	if h := p.Hold("api", "", at(13.6), time.Minute); h.Wait != 1400*time.Millisecond {
		t.Errorf("a clock limiter's spent window: held %v, want 1.4s to the named second", h.Wait)
	}
}

// A probe is held only for a caller who can wait for it: one whose limit
// is shorter than the probe's hold spends the window's last unit at once,
// unprobed, and the request after it waits for the named second.
func TestPacerProbeNotHeldPastTheCallersLimit(t *testing.T) {
	t.Parallel()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	unix := func(remaining int64, named, now float64) ratelimit.Quota {
		return ratelimit.Quota{Remaining: remaining, Limit: 20, Reset: at(named).Sub(at(now)), ResetUnix: true}
	}
	var p ratelimit.Pacer
	p.Observe("api", "", unix(19, 13, 10.31), at(10.3), at(10.31)) // refined: 10.31 + 2s
	p.Observe("api", "", unix(1, 13, 10.6), at(10.59), at(10.6))
	if h := p.Hold("api", "", at(10.6), 500*time.Millisecond); h.Wait != 0 || h.Refused {
		t.Errorf("the last unit under a 0.5s limit: %+v, want it sent at once", h)
	}
	if h := p.Hold("api", "", at(10.6), time.Minute); h.Wait != 2400*time.Millisecond {
		t.Errorf("the request after it: held %v, want 2.4s to the named second", h.Wait)
	}
}

// An attacker's sweep of limiters naming their resets in whole Unix
// seconds: windows that begin at their first request or on the clock,
// lasting whole seconds or fractions past them, with the first request at
// every phase of a second and round trips short and long. Nothing that
// begins at its first request, nor any clock window of whole seconds, is
// refused; a clock window a fraction past whole seconds can pass for one
// that begins at its first request for some windows, and then draws one
// refusal, after which the pacer wakes at its named seconds for good.
func TestPacerLegacyResetSweep(t *testing.T) {
	t.Parallel()
	for _, clock := range []bool{false, true} {
		for _, ms := range []int{1000, 1050, 1100, 1500, 1900, 2000, 2300, 3000, 4200} {
			for off := 0; off < 1000; off += 53 {
				for _, lat := range []time.Duration{time.Millisecond, 9 * time.Millisecond, 40 * time.Millisecond} {
					synctest.Test(t, func(t *testing.T) {
						time.Sleep(time.Duration(off) * time.Millisecond)
						l := &secondLimiter{limit: 10, window: time.Duration(ms) * time.Millisecond, clock: clock, latency: lat}
						var p ratelimit.Pacer
						paced(t, &p, l, 81)
						allowed := 0
						if clock && ms%1000 != 0 {
							allowed = 1
						}
						if l.refused > allowed {
							t.Errorf("clock %v, %dms windows, first request %dms past a second, %v each way: %d refused, want at most %d",
								clock, ms, off, lat, l.refused, allowed)
						}
					})
				}
			}
		}
	}
}

// Limiters stacked under one name take turns being the tightest: the reset
// a window's opener told of one of them (here a limit of 10 a second, its
// reset in Unix seconds) does not shorten the hold of the other (25 in 3 s,
// its reset a delay) when that one is spent, which would wake its requests
// into its own refusals.
func TestPacerOpenerResetIsItsQuotasOwn(t *testing.T) {
	t.Parallel()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var p ratelimit.Pacer
	p.Observe("api", "", ratelimit.Quota{Remaining: 9, Limit: 10, Reset: at(11).Sub(at(10.02)), ResetUnix: true}, at(10.01), at(10.02))
	p.Observe("api", "", ratelimit.Quota{Remaining: 0, Limit: 25, Reset: 2500 * time.Millisecond}, at(10.19), at(10.2))
	if h := p.Hold("api", "", at(10.2), time.Minute); h.Wait != 2500*time.Millisecond {
		t.Errorf("the spent 25-in-3s window held %v; want its own 2.5s, not the other limiter's reset", h.Wait)
	}
}

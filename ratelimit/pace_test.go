package ratelimit_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady/ratelimit"

	"math"
	"strconv"
)

var t0 = time.Unix(1_800_000_000, 0)

// A lone client that waited out one reset is not held again while the new
// window has room: the announced quota spaces held requests, not every
// request after them.
func TestPacerLoneClientNotHeldAfterReset(t *testing.T) {
	t.Parallel()
	var p ratelimit.Pacer
	q := ratelimit.Quota{Remaining: 0, Reset: 5 * time.Second, Limit: 50, Window: 5 * time.Second}
	p.Observe("api", "items", q, t0, t0)
	if h := p.Hold("api", "items", t0, time.Minute); h.Wait != 5*time.Second || h.Jitter != 0 {
		t.Fatalf("the held request: %+v, want the 5s reset without jitter", h)
	}
	now := t0.Add(5 * time.Second)
	for i := range 48 {
		if h := p.Hold("api", "items", now, time.Minute); h.Wait != 0 {
			t.Fatalf("request %d of the new window held %v with room in it", i+1, h.Wait)
		}
		sent := now
		now = now.Add(2 * time.Millisecond)
		p.Observe("api", "items", ratelimit.Quota{Remaining: int64(48 - i), Reset: 5 * time.Second, Limit: 50, Window: 5 * time.Second}, sent, now)
	}
	if n := p.States(); n != 0 {
		t.Errorf("the pacer keeps %d states once the quota had room again", n)
	}
}

// A hold the caller refuses (beyond its limit) reserves nothing: a burst of
// refused calls does not push the next accepted one past the reset.
func TestPacerRefusedHoldsReserveNothing(t *testing.T) {
	t.Parallel()
	var p ratelimit.Pacer
	p.Observe("api", "", ratelimit.Quota{Remaining: 0, Reset: 30 * time.Second, Limit: 10, Window: 10 * time.Second}, t0, t0)
	for range 1000 {
		if h := p.Hold("api", "", t0, 10*time.Second); !h.Refused || h.Wait != 30*time.Second {
			t.Fatalf("a hold beyond the limit: %+v, want refused with its 30s wait", h)
		}
	}
	if h := p.Hold("api", "", t0, time.Minute); h.Refused || h.Wait != 30*time.Second {
		t.Fatalf("first accepted hold after 1000 refused: %+v, want the reset itself", h)
	}
	if h := p.Hold("api", "", t0, time.Minute); h.Wait != 31*time.Second {
		t.Fatalf("second accepted hold: %+v, want one interval after the first", h)
	}
}

// What one response announces cannot hold a host for long: a window beyond
// a day is not believed, a state is forgotten MaxHold after its reset, and
// a later response to a request sent after the hold began lifts it.
func TestPacerBoundsWhatOneResponseSays(t *testing.T) {
	t.Parallel()
	hostile := http.Header{"Ratelimit": {`"default";r=0;t=2`}, "Ratelimit-Policy": {`"default";q=1;w=2147483647`}}
	q, ok := ratelimit.Parse(hostile, t0)
	if !ok || q.Window != 0 || q.Limit != 0 || q.Reset != 2*time.Second {
		t.Fatalf("Parse(%v) = %+v, %v; want the reset without the window", hostile, q, ok)
	}
	p := ratelimit.Pacer{MaxHold: time.Minute}
	p.Observe("api", "", q, t0, t0)
	for i := range 100 {
		if h := p.Hold("api", "", t0, time.Minute); h.Wait != 2*time.Second {
			t.Fatalf("held request %d waits %v, want the 2s reset", i, h.Wait)
		}
	}
	if h := p.Hold("api", "", t0.Add(2*time.Second), time.Minute); h.Wait != 0 {
		t.Fatalf("after the reset a request waits %v", h.Wait)
	}

	// A spaced release as long as the limit allows ends MaxHold after its
	// reset at the latest.
	var r ratelimit.Pacer
	r.MaxHold = time.Minute
	r.Observe("api", "", ratelimit.Quota{Remaining: 0, Reset: time.Second, Limit: 1, Window: ratelimit.MaxPeriod}, t0, t0)
	if h := r.Hold("api", "", t0, time.Hour); h.Wait != time.Second {
		t.Fatalf("first held: %+v", h)
	}
	if h := r.Hold("api", "", t0.Add(time.Second+time.Minute), time.Hour*48); h.Wait != 0 {
		t.Fatalf("MaxHold past the reset a request still waits %v", h.Wait)
	}

	// Fresh news lifts a hold; news older than the hold does not.
	var s ratelimit.Pacer
	s.Observe("api", "", ratelimit.Quota{Remaining: 0, Reset: 30 * time.Second}, t0, t0)
	s.Observe("api", "", ratelimit.Quota{Remaining: 9, Reset: 30 * time.Second}, t0.Add(-time.Millisecond), t0.Add(time.Millisecond))
	if h := s.Hold("api", "", t0.Add(time.Millisecond), time.Minute); h.Wait == 0 {
		t.Fatal("a response to a request sent before the hold lifted it")
	}
	s.Observe("api", "", ratelimit.Quota{Remaining: 9, Reset: 30 * time.Second}, t0.Add(time.Millisecond), t0.Add(2*time.Millisecond))
	if h := s.Hold("api", "", t0.Add(2*time.Millisecond), time.Minute); h.Wait != 0 {
		t.Fatalf("a fresh response saying requests remain left a hold of %v", h.Wait)
	}
}

// Per-host state expires: 100,000 hosts spent once leave nothing behind
// once their resets passed and another host is held.
func TestPacerForgetsHosts(t *testing.T) {
	t.Parallel()
	var p ratelimit.Pacer
	for i := range 100_000 {
		p.Observe("h"+strconv.Itoa(i)+".example", "", ratelimit.Quota{Remaining: 0, Reset: time.Second}, t0, t0)
	}
	if n := p.States(); n != 100_000 {
		t.Fatalf("%d states for 100,000 spent hosts", n)
	}
	later := t0.Add(2 * time.Second)
	p.Observe("another.example", "", ratelimit.Quota{Remaining: 0, Reset: time.Second}, later, later)
	if n := p.States(); n != 1 {
		t.Errorf("%d states after every reset but one passed, want 1", n)
	}
}

// No lock is taken while no host is held: not when none ever was, and not
// when the only state left is a host whose reset passed.
func TestPacerNoLockWhileNothingHeld(t *testing.T) {
	t.Parallel()
	var p ratelimit.Pacer
	ok := ratelimit.Quota{Remaining: 5, Reset: time.Second}
	p.Locked(func() {
		p.Hold("api", "", t0, time.Minute)
		p.Observe("api", "", ok, t0, t0)
	})
	p.Observe("stale.example", "", ratelimit.Quota{Remaining: 0, Reset: time.Second}, t0, t0)
	later := t0.Add(2 * time.Second)
	p.Locked(func() {
		if h := p.Hold("api", "", later, time.Minute); h.Wait != 0 {
			t.Errorf("another host waits %v", h.Wait)
		}
		p.Observe("api", "", ok, later, later)
	})
	// Reaching here means neither call blocked on the lock the test held.
}

func TestRoute(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{"": "", "/": "", "/search": "search", "/search/code": "search", "repos/a": "repos"} {
		if got := ratelimit.Route(path); got != want {
			t.Errorf("Route(%q) = %q, want %q", path, got, want)
		}
	}
}

// A reset in whole Unix seconds is the second it names (ADR 0321) while no
// probe has shown how the quota's windows begin (ADR 0364): the
// response that opened the window does not move it earlier by guessing
// when the window began, and a later, earlier reset still counts.
func TestPacerReadsUnixSecondResetsAsInstants(t *testing.T) {
	t.Parallel()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// X-RateLimit-Reset of the window: its reset's second, rounded up.
	unix := func(reset, now float64) ratelimit.Quota {
		r := t0.Add(time.Duration(math.Ceil(reset)) * time.Second)
		return ratelimit.Quota{Remaining: 19, Limit: 20, Reset: r.Sub(at(now)), ResetUnix: true}
	}
	var p ratelimit.Pacer
	open1 := unix(12.3, 10.31)
	p.Observe("api", "", open1, at(10.3), at(10.31))
	q := open1
	q.Remaining, q.Reset = 0, open1.Reset-190*time.Millisecond
	p.Observe("api", "", q, at(10.49), at(10.5))
	if h := p.Hold("api", "", at(10.5), time.Minute); h.Wait != 2500*time.Millisecond {
		t.Errorf("window 1: held %v, want 2.5s (to the 13s the field says)", h.Wait)
	}
	open2 := unix(15.0, 13.02)
	p.Observe("api", "", open2, at(12.995), at(13.02))
	q = open2
	q.Remaining, q.Reset = 0, open2.Reset-480*time.Millisecond
	p.Observe("api", "", q, at(13.49), at(13.5))
	if h := p.Hold("api", "", at(13.5), time.Minute); h.Wait != 1500*time.Millisecond {
		t.Errorf("window 2: held %v, want 1.5s (to the 15s the field says)", h.Wait)
	}
}

// With its quota announced, the requests held to a reset are released one
// every Window/Limit, not all at the reset.
func TestPacerSpacesReleaseByAnnouncedQuota(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	var p ratelimit.Pacer
	p.Observe("api", "items", ratelimit.Quota{Remaining: 0, Reset: 2 * time.Second, Limit: 10, Window: time.Second}, t0, t0)
	for i := range 5 {
		h := p.Hold("api", "items", t0, time.Minute)
		want := 2*time.Second + time.Duration(i)*100*time.Millisecond
		if h.Wait != want || h.Jitter != 0 || h.Refused {
			t.Errorf("held request %d: %+v, want a wait of %v without jitter", i, h, want)
		}
	}
	if h := p.Hold("other", "items", t0, time.Minute); h.Wait != 0 {
		t.Errorf("another host waits %v", h.Wait)
	}
	// After the held requests drained, nothing waits.
	if h := p.Hold("api", "items", t0.Add(3*time.Second), time.Minute); h.Wait != 0 {
		t.Errorf("after draining a request waits %v", h.Wait)
	}
	// Without an announced quota, every held request gets the reset itself,
	// with a jitter sized to those held before it.
	var q ratelimit.Pacer
	q.Observe("api", "", ratelimit.Quota{Remaining: 0, Reset: time.Second}, t0, t0)
	for i := range 3 {
		h := q.Hold("api", "", t0, time.Minute)
		if want := time.Duration(i) * 10 * time.Millisecond; h.Wait != time.Second || h.Jitter != want {
			t.Errorf("unannounced quota, request %d: %+v, want 1s with a jitter of %v", i, h, want)
		}
	}
	// A response that says requests remain lifts a hold.
	var r ratelimit.Pacer
	r.Observe("api", "", ratelimit.Quota{Remaining: 0, Reset: time.Minute}, t0, t0)
	r.Observe("api", "", ratelimit.Quota{Remaining: 5, Reset: time.Minute}, t0, t0)
	if h := r.Hold("api", "", t0, time.Minute); h.Wait != 0 {
		t.Errorf("lifted hold still waits %v", h.Wait)
	}
}

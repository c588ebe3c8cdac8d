package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/steadyhttp/steady/breaker"
)

// window is a limiter as express-rate-limit's memory store keeps one: a
// window of limit requests opened by the first request after the last one
// ended; the rest of it is refused.
type window struct {
	limit  int
	period time.Duration
	start  time.Time
	hits   int
	open   bool
}

func (w *window) admit(now time.Time) bool {
	if !w.open || !now.Before(w.start.Add(w.period)) {
		w.start, w.hits, w.open = now, 0, true
	}
	w.hits++
	return w.hits <= w.limit
}

// sequential sends n requests one after another through b to w, in virtual
// time from t0, each answered rtt after it is sent, re-sending a refused
// one at once (the breaker's hold spaces it), and returns when the last
// was served and how many were refused.
func sequential(t *testing.T, b *breaker.Breaker, w *window, n int, rtt time.Duration) (time.Duration, int) {
	t.Helper()
	now, refused := t0, 0
	for i := 0; i < n; {
		tk, err := b.Admit(now, "h", "", refused > 0)
		if err != nil {
			t.Fatal(err)
		}
		for hold := tk.Hold(); hold > 0; hold = tk.Rehold(now) {
			now = now.Add(hold)
		}
		if err := tk.Acquire(context.Background()); err != nil || !tk.Sendable() {
			t.Fatalf("Acquire: %v, sendable %v", err, tk.Sendable())
		}
		ok := w.admit(now)
		now = now.Add(rtt)
		if ok {
			tk.Done(now, breaker.Success, 0)
			i++
			continue
		}
		tk.Done(now, breaker.Limited, 0)
		refused++
	}
	return now.Sub(t0), refused
}

// The window of a fixed-window limiter is learned from its first run of
// 429s, to within an eighth, and later windows are booked: the sends end
// within 1.25x the floor, the windows after the first draw at most one
// 429 each (the additive probe of one more send), and the quota learned
// is the limiter's.
func TestQuotaLearnedFromTheFirstWindow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		limit  int
		period time.Duration
	}{{10, time.Second}, {50, 5 * time.Second}, {5000, time.Hour}} {
		b := newBreaker(t, breaker.Config{MaxSpacing: time.Hour})
		w := &window{limit: tc.limit, period: tc.period}
		const windows = 6
		took, refused := sequential(t, b, w, windows*tc.limit+1, time.Millisecond)
		floor := windows * tc.period
		first := 0
		{
			// The 429s of the first window alone, from a fresh run.
			b1 := newBreaker(t, breaker.Config{MaxSpacing: time.Hour})
			_, first = sequential(t, b1, &window{limit: tc.limit, period: tc.period}, tc.limit+1, time.Millisecond)
		}
		limit, period := b.Quota("h", "")
		t.Logf("%d per %v: %v (%.3fx the floor %v), %d 429s (%d learning); learned %d per %v",
			tc.limit, tc.period, took, took.Seconds()/floor.Seconds(), floor, refused, first, limit, period)
		if took > floor*125/100 {
			t.Errorf("%d per %v: took %v, over 1.25x the floor %v", tc.limit, tc.period, took, floor)
		}
		if later := refused - first; later > windows {
			t.Errorf("%d per %v: %d 429s after the first window, want at most one a window", tc.limit, tc.period, later)
		}
		if limit < tc.limit || limit > tc.limit+1 || period < tc.period || period > tc.period*9/8+50*time.Millisecond {
			t.Errorf("%d per %v: learned %d per %v", tc.limit, tc.period, limit, period)
		}
	}
}

// A quota another client shares: the window serves fewer than learned,
// and the learned count comes down to what it serves.
func TestQuotaComesDownWhenTheWindowServesLess(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	w := &window{limit: 10, period: time.Second}
	sequential(t, b, w, 21, time.Millisecond)
	if limit, _ := b.Quota("h", ""); limit < 10 || limit > 11 {
		t.Fatalf("learned %d, want 10 or 11", limit)
	}
	w.limit = 4 // another client takes the rest
	took, refused := sequential(t, b, w, 40, time.Millisecond)
	if limit, _ := b.Quota("h", ""); limit < 4 || limit > 5 {
		t.Errorf("learned %d after the window served 4, want 4 or 5", limit)
	}
	t.Logf("40 more in %v, %d refused", took, refused)
	if refused > 20 {
		t.Errorf("%d 429s for 40 sends at 4 a window, want about one a window", refused)
	}
}

// A window longer than learned refuses the first send of the window the
// breaker booked: the length is learned again, and the sends still end.
func TestQuotaLearnedAgainWhenTheWindowGrows(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	w := &window{limit: 10, period: time.Second}
	sequential(t, b, w, 21, time.Millisecond)
	w.period = 3 * time.Second
	took, _ := sequential(t, b, w, 30, time.Millisecond)
	limit, period := b.Quota("h", "")
	t.Logf("30 more in %v; learned %d per %v", took, limit, period)
	if period < 3*time.Second || period > 3*time.Second*9/8+50*time.Millisecond {
		t.Errorf("learned %d per %v, want the new window of 3s", limit, period)
	}
}

// While a closed window's length is unknown one attempt probes it at a
// time; the others wait for its verdict ([breaker.Ticket.Rehold]) and are
// booked once it passes, never sent into the refusal.
func TestOneProbeAtATime(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	now := t0
	for range 5 {
		tk, _ := b.Admit(now, "h", "", false)
		tk.Done(now, breaker.Success, 0)
	}
	tk, _ := b.Admit(now, "h", "", false)
	tk.Done(now.Add(100*time.Millisecond), breaker.Limited, 0)
	now = now.Add(100 * time.Millisecond)
	probe, _ := b.Admit(now, "h", "", true)
	other, _ := b.Admit(now, "h", "", false)
	if !probe.Scout() || other.Scout() || probe.Hold() <= 0 || other.Hold() <= probe.Hold() {
		t.Fatalf("scouts %v, %v with holds %v, %v; want the first alone, held, the other longer",
			probe.Scout(), other.Scout(), probe.Hold(), other.Hold())
	}
	now = now.Add(other.Hold())
	if hold := other.Rehold(now); hold <= 0 {
		t.Errorf("Rehold before the probe's verdict = %v, want a further hold", hold)
	}
	probe.Done(now, breaker.Success, 0)
	if hold := other.Rehold(now); hold != 0 {
		t.Errorf("Rehold after the probe passed = %v, want 0", hold)
	}
	if limit, period := b.Quota("h", ""); limit != 5 || period <= 100*time.Millisecond {
		t.Errorf("learned %d per %v, want 5 per more than 100ms", limit, period)
	}
}

// A host that refuses outright (no run served) books nothing: the
// caller's own backoff spaces it.
func TestRefusedOutrightIsNotBooked(t *testing.T) {
	t.Parallel()
	b := newBreaker(t, breaker.Config{})
	for range 3 {
		tk, _ := b.Admit(t0, "h", "", false)
		if tk.Hold() != 0 || tk.Scout() {
			t.Fatalf("hold %v, scout %v; want neither", tk.Hold(), tk.Scout())
		}
		tk.Done(t0, breaker.Limited, 0)
		if tk.Booked() {
			t.Fatal("a re-send to a host that never served is booked")
		}
	}
}

// The change that opens a circuit says why: how many of the counted first
// attempts failed; one after a failed probe says neither.
func TestOpenChangeCarriesTheCounts(t *testing.T) {
	t.Parallel()
	var got []breaker.Change
	b := newBreaker(t, breaker.Config{MinRequests: 4, OnChange: func(c breaker.Change) { got = append(got, c) }})
	for i := range 4 {
		tk, _ := b.Admit(t0, "h", "", false)
		o := breaker.Failure
		if i == 0 {
			o = breaker.Success
		}
		tk.Done(t0, o, 0)
	}
	if len(got) == 0 || got[0].State != breaker.Open || got[0].Failures != 3 || got[0].Requests != 4 || got[0].Event().Done != 3 || got[0].Event().Total != 4 {
		t.Fatalf("changes %+v, want the opening with 3 of 4 failed", got)
	}
	later := t0.Add(time.Minute)
	tk, err := b.Admit(later, "h", "", false)
	if err != nil {
		t.Fatal(err)
	}
	tk.Done(later, breaker.Failure, 0)
	last := got[len(got)-1]
	if last.State != breaker.Open || last.Failures != 0 || last.Requests != 0 {
		t.Errorf("change after the failed probe %+v, want an opening with no counts", last)
	}
}

package breaker_test

import (
	"container/heap"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/steadyhttp/steady/breaker"
)

// The outage scenario, replayed in virtual time: many clients, each with
// its own breaker at the defaults, call one host at a steady rate; the host
// answers every request with a 503 for 60 s, then recovers. Each call makes
// up to three attempts (the retry budget's bound is left out, the worst
// case for the breaker). The figures are the issue's: during the outage the
// clients send at most 1.2x the attempts of clients that never retry, and
// within two throttle windows of the recovery the calls succeed at 99% or
// more, every second until the end.
func TestOutageScenario(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		clients int
		rate    float64 // calls a second per client
	}{
		{"1000 clients at 1 call a second", 1000, 1},
		{"20 clients at 50 calls a second", 20, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newOutageSim(t, tt.clients, tt.rate)
			s.run()
			ratio := float64(s.outageAttempts) / float64(s.outageCalls)
			back := s.recoveredAfter()
			t.Logf("attempts during the outage: %d for %d calls (%.3fx); 99%% success %v after recovery",
				s.outageAttempts, s.outageCalls, ratio, back)
			if ratio > 1.2 {
				t.Errorf("sent %.3fx the attempts of a client without retries, want at most 1.2x", ratio)
			}
			if window := 2 * time.Minute; back > 2*window {
				t.Errorf("99%% success came back %v after recovery, want within 2 windows (%v)", back, 2*window)
			}
		})
	}
}

const (
	simHealthy  = 5 * time.Second
	simOutage   = 60 * time.Second
	simAfter    = 5*time.Minute + 30*time.Second
	simLatency  = 20 * time.Millisecond
	simAttempts = 3
)

type outageSim struct {
	t       *testing.T
	rng     *rand.Rand
	clients []*breaker.Breaker
	rate    float64
	queue   simQueue
	seq     int

	outageCalls, outageAttempts int
	ok, calls                   map[int64]int // by second since the start
}

func newOutageSim(t *testing.T, clients int, rate float64) *outageSim {
	s := &outageSim{t: t, rng: rand.New(rand.NewPCG(7, 11)), rate: rate,
		ok: map[int64]int{}, calls: map[int64]int{}}
	for range clients {
		cfg := breaker.Config{Rand: s.rng.Float64}
		b, err := breaker.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.clients = append(s.clients, b)
	}
	return s
}

func (s *outageSim) down(at time.Time) bool {
	return !at.Before(t0.Add(simHealthy)) && at.Before(t0.Add(simHealthy+simOutage))
}

func (s *outageSim) at(when time.Time, fn func(time.Time)) {
	s.seq++
	heap.Push(&s.queue, simEvent{when, s.seq, fn})
}

func (s *outageSim) run() {
	period := time.Duration(float64(time.Second) / s.rate)
	for _, b := range s.clients {
		phase := time.Duration(s.rng.Int64N(int64(period)))
		var next func(time.Time)
		next = func(now time.Time) {
			s.call(b, now)
			if now.Add(period).Before(t0.Add(simHealthy + simOutage + simAfter)) {
				s.at(now.Add(period), next)
			}
		}
		s.at(t0.Add(phase), next)
	}
	for s.queue.Len() > 0 {
		e := heap.Pop(&s.queue).(simEvent)
		e.fn(e.at)
	}
}

// call starts one call at now and follows its attempts.
func (s *outageSim) call(b *breaker.Breaker, now time.Time) {
	start := now
	if s.down(now) {
		s.outageCalls++
	}
	var attempt func(now time.Time, n int)
	attempt = func(now time.Time, n int) {
		tk, err := b.Admit(now, "api.example.com", "", n > 1)
		if err != nil {
			s.finish(start, false)
			return
		}
		now = now.Add(tk.Hold())
		if s.down(now) {
			s.outageAttempts++
		}
		failed := s.down(now)
		s.at(now.Add(simLatency), func(now time.Time) {
			if !failed {
				tk.Done(now, breaker.Success, 0)
				s.finish(start, true)
				return
			}
			tk.Done(now, breaker.Failure, 0)
			if n == simAttempts {
				s.finish(start, false)
				return
			}
			backoff := time.Duration(s.rng.Int64N(int64(100*time.Millisecond) << (n - 1)))
			s.at(now.Add(backoff), func(now time.Time) { attempt(now, n+1) })
		})
	}
	attempt(now, 1)
}

func (s *outageSim) finish(start time.Time, ok bool) {
	sec := int64(start.Sub(t0) / time.Second)
	s.calls[sec]++
	if ok {
		s.ok[sec]++
	}
}

// recoveredAfter returns how long after the recovery the calls started in
// every later second succeeded at 99% or more.
func (s *outageSim) recoveredAfter() time.Duration {
	recovery := int64((simHealthy + simOutage) / time.Second)
	last := int64((simHealthy + simOutage + simAfter) / time.Second)
	from := last
	for sec := last - 1; sec >= recovery; sec-- {
		if s.calls[sec] == 0 || float64(s.ok[sec]) < 0.99*float64(s.calls[sec]) {
			break
		}
		from = sec
	}
	return time.Duration(from-recovery) * time.Second
}

type simEvent struct {
	at  time.Time
	seq int
	fn  func(time.Time)
}

type simQueue []simEvent

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(simEvent)) }
func (q *simQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

package breaker

import (
	"math/rand/v2"
	"sync"
	"time"
)

// A Breaker holds the overload state of every host (and key) it was asked
// about: a circuit, a throttle and a concurrency limit each. It is safe for
// concurrent use; its methods take the time as a parameter and never sleep,
// except [Ticket.Acquire], which waits for a slot.
type Breaker struct {
	cfg Config

	mu      sync.Mutex
	entries map[hostKey]*entry
}

type hostKey struct{ host, key string }

// New returns a Breaker configured by cfg, or cfg's [Config.Validate] error.
func New(cfg Config) (*Breaker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	return &Breaker{cfg: cfg, entries: make(map[hostKey]*entry)}, nil
}

// Admit asks whether an attempt may be sent to host now. The key is an
// opaque string the caller picks to keep separate state under one host (a
// hash of a credential, never the credential itself); "" means the host
// alone. A resend is an attempt after the first of the same call.
//
// A refusal is an [*Error] wrapping [ErrOpen] or [ErrThrottled], whose
// RetryAfter says how long until the host may be tried again; the call ends
// there, it is not re-sent. Otherwise the returned [Ticket] says how long to
// hold the attempt ([Ticket.Hold]), gives a concurrency slot
// ([Ticket.Acquire]), and must be closed with [Ticket.Done].
func (b *Breaker) Admit(now time.Time, host, key string, resend bool) (*Ticket, error) {
	var changes []Change
	b.mu.Lock()
	e := b.lookup(now, host, key)
	t := &Ticket{b: b, e: e, at: now, first: !resend, cuts: e.cuts}
	var err error
	t.probe, err = e.admitCircuit(now, &b.cfg, resend, &changes)
	t.gen = e.gen
	if err == nil && !resend && !t.probe {
		err = e.admitThrottle(now, &b.cfg)
	}
	if err == nil {
		t.hold = e.q.book(now, t)
	}
	b.mu.Unlock()
	b.emit(changes)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Check returns the refusal [Breaker.Admit] would give a re-send to host
// and key at now, without admitting anything or changing any state: an
// [*Error] wrapping [ErrOpen] when the circuit is not closed, else nil. A
// retry loop asks it before it waits out a failure, so that a re-send the
// circuit refuses ends the call with the failed response still in hand.
func (b *Breaker) Check(now time.Time, host, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[hostKey{host, key}]
	switch {
	case !ok || e.state == Closed:
		return nil
	case e.state == Open && now.Before(e.openUntil):
		return &Error{Host: host, Err: ErrOpen, Wait: e.openUntil.Sub(now)}
	}
	return &Error{Host: host, Err: ErrOpen, Wait: probeWait}
}

// State returns the circuit state of host and key as of the last call that
// touched it; [Closed] for one the breaker does not track.
func (b *Breaker) State(host, key string) State {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.entries[hostKey{host, key}]; ok {
		return e.state
	}
	return Closed
}

// Limit returns how many attempts may be in flight to host and key (0 for
// no limit) and the mean time between sends of the quota learned from its
// headerless 429s (0 while none is known).
func (b *Breaker) Limit(host, key string) (concurrency int, spacing time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.entries[hostKey{host, key}]; ok {
		return int(e.limit), e.q.spacingOf()
	}
	return b.cfg.MaxConcurrency, 0
}

// Quota returns the quota learned from the headerless 429s of host and key:
// how many sends a window of its limiter serves, and how long the window
// lasts; 0 and 0 while none is known.
func (b *Breaker) Quota(host, key string) (limit int, period time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.entries[hostKey{host, key}]; ok && e.q.period > 0 {
		return e.q.limit, e.q.period
	}
	return 0, 0
}

// lookup returns the entry of host and key, making it when there is none,
// and marks it used. Called with b.mu held.
func (b *Breaker) lookup(now time.Time, host, key string) *entry {
	k := hostKey{host, key}
	e, ok := b.entries[k]
	if !ok {
		if len(b.entries) >= b.cfg.MaxHosts {
			b.evict()
		}
		e = newEntry(host, key, &b.cfg)
		b.entries[k] = e
	}
	e.used = now
	return e
}

// evict forgets one entry: the least recently used of those closed with
// nothing in flight, or else the least recently used of all. Tickets of an
// evicted entry keep working on it; it is no longer found.
func (b *Breaker) evict() {
	var victim *entry
	better := func(e *entry) bool {
		if victim == nil {
			return true
		}
		if e.idle() != victim.idle() {
			return e.idle()
		}
		return e.used.Before(victim.used)
	}
	for _, e := range b.entries {
		if better(e) {
			victim = e
		}
	}
	delete(b.entries, hostKey{victim.host, victim.key})
}

func (b *Breaker) emit(changes []Change) {
	if b.cfg.OnChange == nil {
		return
	}
	for _, c := range changes {
		b.cfg.OnChange(c)
	}
}

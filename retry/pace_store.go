package retry

import (
	"context"
	"sync"
	"time"
)

// Shared quota leases (ADR 200): a process asks for twenty permits at a
// time, so steady traffic costs one store call per twenty requests; the
// store grants fewer as a quota nears its end. Only a host whose responses
// carried a quota is asked about. At most maxSharedQuotaKeys quotas are
// followed at once; beyond that a quota is paced locally.
const (
	quotaLeaseSize     = 20
	maxSharedQuotaKeys = 1024
	sharedQuotaIdle    = time.Minute // a quota unused this long is forgotten
)

// sharedQuotas is a Transport's view of its [QuotaStore]: per quota, the
// lease in hand and the latest quota seen, not yet sent.
type sharedQuotas struct {
	guard storeGuard
	mu    sync.Mutex
	keys  map[string]*sharedQuota
}

type sharedQuota struct {
	mu    sync.Mutex // one store call per quota at a time; guards the lease
	base  time.Time  // when the lease arrived
	lease QuotaLease
	used  int

	seenMu   sync.Mutex
	seen     Quota
	seenAt   time.Time
	observed bool
	lastUse  time.Time
}

// lookup returns key's entry, nil when no response from it has carried a
// quota: a host that announces none costs no store call.
func (s *sharedQuotas) lookup(key string) *sharedQuota {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[key]
}

func (s *sharedQuotas) entry(key string, now time.Time) *sharedQuota {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.keys[key]; ok {
		return q
	}
	if s.keys == nil {
		s.keys = make(map[string]*sharedQuota)
	}
	if len(s.keys) >= maxSharedQuotaKeys {
		for k, q := range s.keys {
			q.seenMu.Lock()
			idle := now.Sub(q.lastUse) > sharedQuotaIdle
			q.seenMu.Unlock()
			if idle {
				delete(s.keys, k)
			}
		}
		if len(s.keys) >= maxSharedQuotaKeys {
			return nil
		}
	}
	q := &sharedQuota{lastUse: now}
	s.keys[key] = q
	return q
}

// hold takes a permit for key: how long to wait for it and whether it is a
// slot of a spaced release. ok is false when the store could not answer;
// the request is then paced locally.
func (s *sharedQuotas) hold(store QuotaStore, key string, now time.Time) (wait time.Duration, spaced, ok bool) {
	q := s.lookup(key)
	if q == nil {
		return 0, false, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if wait, spaced, ok := q.take(now); ok {
		return wait, spaced, true
	}
	if !s.guard.usable(now) {
		return 0, false, false
	}
	lease, ok := s.call(store, key, q, quotaLeaseSize, now)
	if !ok {
		return 0, false, false
	}
	// Start counts from the answer, not from the question.
	q.base, q.lease, q.used = time.Now(), lease, 0
	return q.take(q.base)
}

// take hands out the lease's next permit still valid at now.
func (q *sharedQuota) take(now time.Time) (wait time.Duration, spaced, ok bool) {
	for q.used < q.lease.Count {
		at := q.base.Add(q.lease.Start + time.Duration(q.used)*q.lease.Interval)
		q.used++
		if now.After(at.Add(q.lease.TTL)) {
			continue // expired unused: lost to the fleet for this window
		}
		return max(at.Sub(now), 0), q.lease.Interval > 0, true
	}
	return 0, false, false
}

// observe records what a response said about key's quota. A spent quota is
// told to the store at once, unless a call is already in flight, and the
// permits in hand that were meant for now are dropped: they would only draw
// refusals.
func (s *sharedQuotas) observe(store QuotaStore, key string, seen Quota, now time.Time) {
	q := s.entry(key, now)
	if q == nil {
		return
	}
	q.seenMu.Lock()
	q.seen, q.seenAt, q.observed, q.lastUse = seen, now, true, now
	q.seenMu.Unlock()
	if seen.Remaining > 0 || seen.Reset <= 0 || !q.mu.TryLock() {
		return
	}
	defer q.mu.Unlock()
	if q.lease.Start == 0 {
		q.used = q.lease.Count
	}
	if s.guard.usable(now) {
		s.call(store, key, q, 0, now)
	}
}

// call makes one store call under q.mu, sending the quota last seen.
func (s *sharedQuotas) call(store QuotaStore, key string, q *sharedQuota, want int, now time.Time) (QuotaLease, bool) {
	q.seenMu.Lock()
	c := QuotaCall{Want: want, Observed: q.observed}
	if c.Observed {
		c.Seen, c.Age = q.seen, max(now.Sub(q.seenAt), 0)
	}
	q.observed, q.lastUse = false, now
	q.seenMu.Unlock()
	ctx, cancel := storeContext(context.Background())
	lease, err := store.TakeQuota(ctx, key, c)
	cancel()
	s.guard.result(err, now)
	if err != nil {
		if c.Observed {
			q.seenMu.Lock()
			if !q.observed { // nothing newer: send it next time
				q.observed = true
			}
			q.seenMu.Unlock()
		}
		return QuotaLease{}, false
	}
	lease.Count = min(max(lease.Count, 0), max(want, 0))
	lease.Start, lease.Interval, lease.TTL = max(lease.Start, 0), max(lease.Interval, 0), max(lease.TTL, 0)
	return lease, true
}

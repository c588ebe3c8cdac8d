package ratelimit

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"
)

// Shared quota leases (ADR 200): a process asks for twenty permits at a
// time, so steady traffic costs one store call per twenty requests; the
// store grants fewer as a quota nears its end. Only a quota some response
// of this process reported is asked about, so a host that announces none
// costs no store call. At most maxSharedQuotas quotas are followed at once;
// beyond that a quota is paced locally.
const (
	quotaLeaseSize  = 20
	maxSharedQuotas = 1024
	sharedQuotaIdle = time.Minute // a quota unused this long may be forgotten
)

// A SharedPacer is a [Limiter] that paces every process using the same
// [Leaser] as one client: each request takes a permit from a lease the
// leaser granted, and what responses say about their quotas is told to it.
// The process's own [Pacer] answers as well, and the later of the two holds
// wins; while the leaser fails or is slow, the Pacer answers alone, and a
// leaser's hold further than the limit past the reset the API itself last
// reported is not believed (ADR 291). Give one
// SharedPacer to every transport of a process; it is safe for concurrent
// use.
type SharedPacer struct {
	Leaser Leaser

	local  Pacer
	shared sharedQuotas
}

var _ Limiter = (*SharedPacer)(nil)

// Hold implements [Limiter]: the later of the local and the shared hold.
func (p *SharedPacer) Hold(host, route string, now time.Time, limit time.Duration) Hold {
	h := p.local.Hold(host, route, now, limit)
	if p.Leaser == nil || h.Refused {
		return h
	}
	wait, spaced, ok := p.shared.hold(p.Leaser, host, route, now, limit)
	switch {
	case !ok || wait <= h.Wait:
		return h
	case wait > limit:
		return Hold{Wait: wait, Refused: true}
	}
	sh := Hold{Wait: wait, Spaced: spaced}
	if !spaced {
		sh.Jitter = min(time.Second, wait/10)
	}
	return sh
}

// Observe implements [Limiter]: the local [Pacer] and the [Leaser] are told.
func (p *SharedPacer) Observe(host, route string, q Quota, sent, now time.Time) {
	p.local.Observe(host, route, q, sent, now)
	if p.Leaser != nil {
		p.shared.observe(p.Leaser, host, route, q, now)
	}
}

// Release hands back the permits for now that no request has taken, so
// the rest of the fleet can send them. A retry transport calls it when its
// idle connections are closed, as a program does when it is done; requests
// after it simply take a new lease.
func (p *SharedPacer) Release() {
	if p.Leaser != nil {
		p.shared.release(p.Leaser)
	}
}

// sharedQuotas is a SharedPacer's view of its [Leaser]: per quota (a
// host, and a name when the server named its quota), the lease in hand and
// the latest report not yet sent.
type sharedQuotas struct {
	guard storeGuard
	mu    sync.Mutex
	hosts map[string][]*sharedQuota
	count int
	// unleased counts, per host no response has shown a quota for yet,
	// the requests sent without a permit; the host's first quota reports
	// them (LeaseCall.Unleased).
	unleased map[string]int
}

type sharedQuota struct {
	key  string // the store's name for it: host, or host and quota name
	name string

	mu    sync.Mutex // one store call per quota at a time; guards the lease
	base  time.Time  // when the lease arrived
	lease Lease
	used  int

	seenMu   sync.Mutex // guards the fields below
	seen     Quota
	seenAt   time.Time
	observed bool
	lastUse  time.Time
	unleased int      // requests sent before the quota was known, to report
	routes   []string // for a named quota, the routes that drew it
	all      bool     // too many routes to list: it draws every request
}

// draws reports whether a request on route draws the quota, as the
// [Pacer] decides it.
func (q *sharedQuota) draws(route string) bool {
	q.seenMu.Lock()
	defer q.seenMu.Unlock()
	return q.name == "" || q.all || slices.Contains(q.routes, route)
}

// drawn returns the quotas of host a request on route draws.
func (s *sharedQuotas) drawn(host, route string) []*sharedQuota {
	s.mu.Lock()
	qs := s.hosts[host]
	if len(qs) == 0 {
		if s.unleased == nil {
			s.unleased = make(map[string]int)
		}
		if len(s.unleased) >= maxSharedQuotas {
			clear(s.unleased) // counts lost: a little more quota spent, nothing else
		}
		s.unleased[host]++
	}
	s.mu.Unlock()
	var out []*sharedQuota
	for _, q := range qs {
		if q.draws(route) {
			out = append(out, q)
		}
	}
	return out
}

// entry returns the quota of host named name, made on first report; nil
// when too many quotas are followed already.
func (s *sharedQuotas) entry(host, name string, now time.Time) *sharedQuota {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.hosts[host] {
		if q.name == name {
			return q
		}
	}
	if s.count >= maxSharedQuotas {
		s.sweep(now)
		if s.count >= maxSharedQuotas {
			return nil
		}
	}
	if s.hosts == nil {
		s.hosts = make(map[string][]*sharedQuota)
	}
	key := host
	if name != "" {
		key = host + "\x00" + name
	}
	q := &sharedQuota{key: strings.Clone(key), name: strings.Clone(name), lastUse: now}
	if len(s.hosts[host]) == 0 {
		q.unleased = s.unleased[host]
		delete(s.unleased, host)
	}
	s.hosts[strings.Clone(host)] = append(s.hosts[host], q)
	s.count++
	return q
}

// sweep forgets the quotas idle for sharedQuotaIdle; s.mu is held.
func (s *sharedQuotas) sweep(now time.Time) {
	for host, qs := range s.hosts {
		kept := qs[:0]
		for _, q := range qs {
			q.seenMu.Lock()
			idle := now.Sub(q.lastUse) > sharedQuotaIdle
			q.seenMu.Unlock()
			if !idle {
				kept = append(kept, q)
			}
		}
		s.count -= len(qs) - len(kept)
		if len(kept) == 0 {
			delete(s.hosts, host)
		} else {
			s.hosts[host] = kept
		}
	}
}

// hold takes a permit, for a request to host on route to be sent at at,
// from every shared quota the request draws: how long after at to wait for
// the latest, and whether that is a slot of a spaced release. A permit
// further away than limit is handed back. ok is false when no quota is
// shared or the store could not answer; the request is then paced locally.
func (s *sharedQuotas) hold(store Leaser, host, route string, at time.Time, limit time.Duration) (wait time.Duration, spaced, ok bool) {
	for _, q := range s.drawn(host, route) {
		w, sp, got := s.take(store, q, at, limit)
		if got && !q.believable(at, w, limit) {
			s.disbelieve(q)
			got = false
		}
		if got && (!ok || w > wait) {
			wait, spaced = w, sp
		}
		ok = ok || got
	}
	return wait, spaced, ok
}

// believable reports whether a shared wait from at ends within limit of
// the reset the API itself last reported for q, or of at once that reset
// passed (ADR 291): a store's hold further out than that is not the API's,
// whoever planted it.
func (q *sharedQuota) believable(at time.Time, wait, limit time.Duration) bool {
	q.seenMu.Lock()
	defer q.seenMu.Unlock()
	if q.seenAt.IsZero() {
		return true
	}
	return !at.Add(wait).After(maxTime(at, q.seenAt.Add(q.seen.Reset)).Add(limit))
}

// disbelieve drops the lease a store granted past what the API reported,
// and leaves the store alone for a while as one that failed: the request
// is paced locally, and the next call tells the store the API's news.
func (s *sharedQuotas) disbelieve(q *sharedQuota) {
	q.mu.Lock()
	q.lease, q.used = Lease{}, 0
	q.mu.Unlock()
	s.guard.result(errDisbelieved, time.Now())
}

var errDisbelieved = errors.New("ratelimit: the store's hold is past the API's reset")

func (s *sharedQuotas) take(store Leaser, q *sharedQuota, at time.Time, limit time.Duration) (wait time.Duration, spaced, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if wait, spaced, ok := q.next(at, limit); ok {
		return wait, spaced, true
	}
	now := time.Now()
	if !s.guard.usable(now) {
		return 0, false, false
	}
	lease, ok := s.call(store, q, quotaLeaseSize, now)
	if !ok {
		return 0, false, false
	}
	// Start counts from the answer, not from the question.
	q.base, q.lease, q.used = time.Now(), lease, 0
	return q.next(maxTime(at, q.base), limit)
}

// next hands out the lease's next permit still valid at at; one beyond
// limit is left for a later request.
func (q *sharedQuota) next(at time.Time, limit time.Duration) (wait time.Duration, spaced, ok bool) {
	for q.used < q.lease.Count {
		from := q.base.Add(q.lease.Start + time.Duration(q.used)*q.lease.Interval)
		if at.After(from.Add(q.lease.TTL)) {
			q.used++ // expired unused: lost to the fleet for this window
			continue
		}
		wait = max(from.Sub(at), 0)
		if wait > limit {
			return wait, q.lease.Interval > 0, true
		}
		q.used++
		return wait, q.lease.Interval > 0, true
	}
	return 0, false, false
}

// observe records what a response to a request on route said about a
// quota of host. A spent quota is told to the store at once, unless a call
// for it is in flight, and the permits in hand meant for now are dropped:
// they would only draw refusals.
func (s *sharedQuotas) observe(store Leaser, host, route string, seen Quota, now time.Time) {
	q := s.entry(host, seen.Name, now)
	if q == nil {
		return
	}
	q.seenMu.Lock()
	q.seen, q.seenAt, q.observed, q.lastUse = seen, now, true, now
	if q.name != "" && !q.all && !slices.Contains(q.routes, route) {
		if len(q.routes) < maxRoutes {
			q.routes = append(q.routes, strings.Clone(route))
		} else {
			q.all, q.routes = true, nil
		}
	}
	q.seenMu.Unlock()
	if seen.Remaining > 0 || seen.Reset <= 0 || !q.mu.TryLock() {
		return
	}
	defer q.mu.Unlock()
	if q.lease.Start == 0 {
		q.used = q.lease.Count
	}
	if s.guard.usable(now) {
		s.call(store, q, 0, now)
	}
}

func (s *sharedQuotas) release(store Leaser) {
	s.mu.Lock()
	var qs []*sharedQuota
	for _, hq := range s.hosts {
		qs = append(qs, hq...)
	}
	s.mu.Unlock()
	now := time.Now()
	for _, q := range qs {
		q.mu.Lock()
		n := q.lease.Count - q.used
		valid := now.Before(q.base.Add(q.lease.Start + q.lease.TTL))
		if n > 0 && valid && q.lease.Start == 0 && q.lease.Interval == 0 && s.guard.usable(now) {
			q.used = q.lease.Count
			s.callReturning(store, q, 0, n, q.lease.Epoch, now)
		}
		q.mu.Unlock()
	}
}

// call makes one store call under q.mu, sending the report not yet sent.
func (s *sharedQuotas) call(store Leaser, q *sharedQuota, want int, now time.Time) (Lease, bool) {
	return s.callReturning(store, q, want, 0, 0, now)
}

func (s *sharedQuotas) callReturning(store Leaser, q *sharedQuota, want, returned int, epoch int64, now time.Time) (Lease, bool) {
	q.seenMu.Lock()
	c := LeaseCall{Want: want, Observed: q.observed, Returned: returned, Epoch: epoch, Unleased: q.unleased}
	if c.Observed {
		c.Seen, c.Age = q.seen, max(now.Sub(q.seenAt), 0)
	}
	q.observed, q.unleased, q.lastUse = false, 0, now
	q.seenMu.Unlock()
	ctx, cancel := storeContext(context.Background())
	lease, err := store.TakeQuota(ctx, q.key, c)
	cancel()
	s.guard.result(err, now)
	if err != nil {
		q.seenMu.Lock()
		if c.Observed {
			q.observed = true // nothing newer may have come: send it next time
		}
		q.unleased += c.Unleased
		q.seenMu.Unlock()
		return Lease{}, false
	}
	lease.Count = min(max(lease.Count, 0), max(want, 0))
	lease.Start, lease.Interval, lease.TTL = max(lease.Start, 0), max(lease.Interval, 0), max(lease.TTL, 0)
	return lease, true
}

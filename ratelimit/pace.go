package ratelimit

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Pacer holds requests whose quota is spent. When a response says no
// requests remain until a reset, the requests that draw that quota wait for
// the reset: all requests to the host for an unnamed quota, only those on
// the routes (first path segments) that drew it for a named one, such as
// GitHub's `search` resource. When the server also announced its quota
// (RateLimit-Policy), the requests held are released one every
// Window/Limit rather than all at once, so a fleet held to one reset does
// not spend the new window in its first instant and run out again; requests
// that arrive once the window reset and find room in it are not held.
//
// What a pacer keeps is bounded: a quota's state is forgotten when its
// reset passed and its held requests drained, and at the latest MaxHold
// after its reset, whatever the response said; a later response to a
// request sent after the quota was seen spent, saying requests remain,
// clears it at once. While no quota is held the pacer takes no lock.
//
// The zero value is ready to use and safe for concurrent use. Give one
// Pacer to every transport that should pace as one client.
type Pacer struct {
	// MaxHold bounds how long after its reset a quota's state is kept
	// (0: a minute). Set it to the longest wait the caller would serve.
	MaxHold time.Duration
	// Reserve is the part of every window, 0 to [MaxReserve], left to
	// other users of the key (ADR 0323): a window counts as spent when no
	// more than Reserve of its limit remains, and its release after a
	// reset spaces only what is not reserved. It needs the window's limit
	// announced; [Pacer.Validate] tells a value out of range, which counts
	// as 0.
	Reserve float64

	known   knownWindows // every window heard of, for ETAs
	states  atomic.Int32 // quotas with state; lets the common case skip the lock
	horizon atomic.Int64 // Unix ns after which no state holds anything
	mu      sync.Mutex
	hosts   map[string][]*quotaState
	opened  map[quotaKey]*opening // what each window's first response implies
	count   int                   // states, under mu
	sweepAt int                   // sweep expired states when count reaches it,
	swept   time.Time             // or a second after the last sweep
}

// MaxReserve is the largest [Pacer.Reserve]: a pacer leaves itself at
// least a tenth of every window.
const MaxReserve = 0.9

// ReserveError is [Pacer.Validate]'s answer to a Reserve out of range.
type ReserveError struct{ Reserve float64 }

func (e *ReserveError) Error() string {
	return fmt.Sprintf("ratelimit: Reserve %v is not between 0 and %v", e.Reserve, MaxReserve)
}

// Validate reports a field of p out of range: a *[ReserveError].
func (p *Pacer) Validate() error {
	if !(p.Reserve >= 0 && p.Reserve <= MaxReserve) { // NaN too
		return &ReserveError{Reserve: p.Reserve}
	}
	return nil
}

// reserve is the Reserve in force: 0 when out of range.
func (p *Pacer) reserve() float64 {
	if p.Validate() != nil {
		return 0
	}
	return p.Reserve
}

// A Limiter answers the two questions a transport asks about rate limits:
// may a request be sent now, or how long must it wait (Hold), and what did
// a response announce (Observe). [Pacer] keeps the spent quotas of one
// process; [SharedPacer] shares them through a [Leaser]. Hold and Observe
// have the meaning of [Pacer.Hold] and [Pacer.Observe]; an implementation
// must answer at once, and one that cannot reach its shared state answers
// from local state rather than stall a request.
type Limiter interface {
	Hold(host, route string, now time.Time, limit time.Duration) Hold
	Observe(host, route string, q Quota, sent, now time.Time)
}

var _ Limiter = (*Pacer)(nil)

// Hold is a [Limiter]'s answer for one request.
type Hold struct {
	// Wait is how long the request must wait for its slot; 0: send now.
	Wait time.Duration
	// Jitter is the ceiling of a jitter to add to Wait, so that requests
	// held to one reset do not wake together. It is sized to the requests
	// already held for that reset (none: no jitter), and is 0 for the slot
	// of a spaced release, which has its own instant.
	Jitter time.Duration
	// Spaced is set for the slot of a spaced release (the quota was
	// announced).
	Spaced bool
	// Refused is set when Wait exceeds the limit the caller gave: nothing
	// was reserved.
	Refused bool
}

// defaultMaxHold is how long after its reset a quota's state is kept when
// [Pacer.MaxHold] is 0: the longest server-named wait a transport serves
// by default.
const defaultMaxHold = time.Minute

// holdJitterStep is the spread per request already held for a reset: 100
// held requests spread over a second, the most any hold is jittered.
const holdJitterStep = 10 * time.Millisecond

// quotaState is one spent quota: the whole of what a pacer keeps per
// quota, and the piece a shared store would keep.
type quotaState struct {
	name     string   // "": the whole host
	routes   []string // for a named quota, the routes that drew it
	all      bool     // too many routes to list: it holds every request
	seen     time.Time
	until    time.Time // the reset
	expires  time.Time // until + MaxHold: forgotten then, whatever was said
	limit    int64
	interval time.Duration // Window/Limit when announced, else 0
	next     time.Time     // the next slot of a spaced release
	held     int64         // requests given a slot since it was seen spent
	probe    time.Time     // the probe's slot, before until; zero once taken (ADR 0364)
}

const maxRoutes = 8

type quotaKey struct{ host, name string }

// opening is what the response that opened a quota's window implies, and
// what the quota's resets in whole Unix seconds taught about its windows.
type opening struct {
	at      time.Time     // the reset: zero once a spent quota used it
	limit   int64         // the limit of the quota whose window opened
	unix    bool          // and whether it named its reset in Unix seconds
	seen    time.Time     // forgotten MaxHold after
	named   time.Time     // the latest Unix-second reset seen
	refined time.Time     // when that window ends if it began at its first request; zero: unknown
	window  time.Duration // whole seconds a window lasts, learnt by refine
	ended   time.Duration // the window of those probes saw ended before their named second
	probes  int           // probes that saw that
	kind    windowKind
}

// windowKind is what a quota's resets in whole Unix seconds mean (ADR
// 0364): the second a window reset on, or the first second after a window
// that began at its first request and ends inside a second.
type windowKind uint8

const (
	kindUnknown  windowKind = iota // probe the last unit of a window
	kindAnchored                   // windows begin at their first request: wake at the refined end
	kindClock                      // windows reset on the named second: wake at it
)

// anchorProbes is how many probes must see their windows end early, for
// windows of one length, before later windows are refined: one
// could find the boundary of a clock window that lasts a fraction of a
// second past whole seconds, by chance, just before it.
const anchorProbes = 3

// clockSlack is how far before its named second a window must be seen
// ended to show it began at its first request, and the least a probe must
// gain: it covers a round trip and a small skew between the clocks.
const clockSlack = 100 * time.Millisecond

// draws reports whether a request on route draws the quota.
func (s *quotaState) draws(route string) bool {
	return s.name == "" || s.all || slices.Contains(s.routes, route)
}

// slot returns when a request at now may be sent, and whether that is a
// slot of a spaced release. done means the state holds nothing any more.
func (s *quotaState) slot(now time.Time) (at time.Time, spaced, done bool) {
	if !now.Before(s.expires) {
		return now, false, true
	}
	if now.Before(s.until) {
		if !s.probe.IsZero() {
			return s.probe, false, false
		}
		if s.interval > 0 {
			return s.next, true, false
		}
		return s.until, false, false
	}
	// The window reset. Held requests still draining at the announced rate
	// leave room in it for the rest of the limit.
	if s.interval == 0 || !s.next.After(now) {
		return now, false, true
	}
	if s.held < s.limit {
		return now, false, false
	}
	return s.next, true, false
}

func (s *quotaState) reserve(at time.Time, spaced bool) {
	s.probe = time.Time{} // one probe: the requests after it wait for the reset
	s.held++
	if spaced {
		s.next = at.Add(s.interval)
	}
}

// last is the latest instant the state can hold a request at.
func (s *quotaState) last() time.Time {
	if s.next.After(s.until) {
		return s.next
	}
	return s.until
}

// Route returns the part of a request path that names what it draws for
// named quotas: its first segment.
func Route(path string) string {
	path = strings.TrimPrefix(path, "/")
	route, _, _ := strings.Cut(path, "/")
	return route
}

// Hold returns how long a request to host on route must wait at now. It
// reserves the request's slot unless the wait would exceed limit, in which
// case nothing is reserved and Refused is set: call it once per request.
func (p *Pacer) Hold(host, route string, now time.Time, limit time.Duration) Hold {
	if p.states.Load() == 0 || now.UnixNano() >= p.horizon.Load() {
		return Hold{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	states := p.hosts[host]
	at, spaced, queued := now, false, int64(0)
	for i := 0; i < len(states); i++ {
		s := states[i]
		sAt, sSpaced, done := s.slot(now)
		if done {
			states = p.remove(host, states, i)
			i--
			continue
		}
		if !s.draws(route) || !sAt.After(now) {
			continue
		}
		if !s.probe.IsZero() && sAt.Equal(s.probe) && sAt.Sub(now) > limit {
			continue // a probe the caller cannot wait for: the last unit goes now, unprobed
		}
		if sAt.After(at) {
			at, spaced = sAt, sSpaced
		}
		queued = max(queued, s.held)
	}
	wait := at.Sub(now)
	if wait <= 0 {
		// Requests that find room count against the limit of a draining
		// release.
		for _, s := range states {
			if s.draws(route) && !now.Before(s.until) {
				s.held++
			}
			if s.draws(route) && !s.probe.IsZero() {
				s.probe = time.Time{} // this request is the probe
			}
		}
		return Hold{}
	}
	if wait > limit {
		return Hold{Wait: wait, Refused: true}
	}
	for _, s := range states {
		if s.draws(route) {
			sAt, sSpaced, _ := s.slot(now)
			if sAt.After(now) {
				s.reserve(at, sSpaced)
				p.extend(s.last())
			}
		}
	}
	h := Hold{Wait: wait, Spaced: spaced}
	if !spaced {
		h.Jitter = min(time.Second, wait/10, time.Duration(queued)*holdJitterStep)
	}
	return h
}

// Observe records the quota q that a response to a request to host on
// route said at now; sent is when that request was sent, so that news older
// than a hold does not lift it.
//
// The response that opened a window (one request of its limit spent) says
// most precisely when the window resets: its own reset is an upper bound
// short of the window by only a round trip, where the last response's is
// late by the time the window's requests took. It is kept until the quota
// is spent, and costs a lock once a window. A reset in whole Unix seconds
// is the second it names unless the quota's windows were seen to begin at
// their first request, which the last unit of a window, sent as a probe,
// tells (ADR 0364).
func (p *Pacer) Observe(host, route string, q Quota, sent, now time.Time) {
	p.known.record(host, route, q, now)
	kept := reserved(q.Limit, p.reserve())
	if !p.notes(&q, kept, now) {
		return // nothing held to lift: the common case takes no lock
	}
	spent := q.Remaining <= kept && q.Reset > 0
	p.mu.Lock()
	defer p.mu.Unlock()
	probe := p.learn(host, q, kept, sent, now)
	states := p.hosts[host]
	var s *quotaState
	for i, st := range states {
		if st.name == q.Name {
			s = st
			if !spent {
				if sent.Before(st.seen) {
					return // older news than the hold
				}
				if probe.IsZero() {
					p.remove(host, states, i) // fresh news: the quota has room
					return
				}
			}
			break
		}
	}
	if !spent && probe.IsZero() {
		return
	}
	until := now.Add(q.Reset)
	key := quotaKey{host, q.Name}
	if o, ok := p.opened[key]; ok && spent {
		// Only the quota whose window the opener opened: limiters stacked
		// under one name take turns being the tightest.
		if o.at.After(now) && o.at.Before(until) && o.limit == q.Limit && o.unix == q.ResetUnix {
			until = o.at
		}
		o.at = time.Time{}
	}
	s = p.hold(host, q.Name, s, until, now)
	s.probe = probe
	s.limit, s.interval = 0, 0
	if q.Limit > 0 && q.Window > 0 && q.Limit <= maxLimit && q.Window <= MaxPeriod {
		s.limit = q.Limit - kept // the reserve is not released
		s.interval = q.Window / time.Duration(s.limit)
	}
	if s.name != "" && !s.all && !s.draws(route) {
		if len(s.routes) < maxRoutes {
			s.routes = append(s.routes, strings.Clone(route))
		} else {
			s.all, s.routes = true, nil
		}
	}
	p.extend(s.last())
}

// hold makes s (nil: a new state of host for the quota name) hold its
// quota until. Called under mu.
func (p *Pacer) hold(host, name string, s *quotaState, until, now time.Time) *quotaState {
	maxHold := p.MaxHold
	if maxHold <= 0 {
		maxHold = defaultMaxHold
	}
	switch {
	case s == nil:
		s = &quotaState{name: strings.Clone(name), next: until}
		p.add(host, s, now)
	case !now.Before(s.expires):
		*s = quotaState{name: s.name, routes: s.routes[:0], next: until}
	case !now.Before(s.until):
		// A new window spent: the slots given in the last one are used.
		s.held = 0
		s.next = maxTime(s.next, until)
	default:
		// Held requests keep their slots; the release starts no earlier
		// than the new reset.
		s.next = maxTime(s.next, until)
	}
	s.seen, s.until, s.expires = now, until, until.Add(maxHold)
	return s
}

// notes reports whether Observe would take note of q at now: q spends its
// quota or opens its window, or a state is held that q may lift.
func (p *Pacer) notes(q *Quota, kept int64, now time.Time) bool {
	return q.Reset > 0 && (q.Remaining <= kept || q.Limit > 0 && q.Remaining == q.Limit-1 || q.ResetUnix && q.Remaining == kept+1) ||
		q.ResetUnix && q.Remaining <= kept || p.holds(now)
}

// holds reports whether a state may hold a request at now.
func (p *Pacer) holds(now time.Time) bool {
	return p.states.Load() != 0 && now.UnixNano() < p.horizon.Load()
}

// learn keeps the reset that q, the answer to the request that opened its
// window, says, and what a reset in whole Unix seconds tells of the
// quota's windows. It returns the instant to send a probe at when q leaves
// one unit of a window whose kind is unknown (zero: no probe). Called
// under mu.
func (p *Pacer) learn(host string, q Quota, kept int64, sent, now time.Time) (probe time.Time) {
	opener := q.Limit > 0 && q.Remaining == q.Limit-1 && q.Reset > 0
	unix := q.ResetUnix // a reset already past reads as 0
	if !opener && !unix {
		return time.Time{}
	}
	if p.opened == nil {
		p.opened = make(map[quotaKey]*opening)
	}
	key := quotaKey{host, q.Name}
	o := p.opened[key]
	if o == nil {
		p.sweep(now)
		o = &opening{}
		p.opened[quotaKey{strings.Clone(host), strings.Clone(q.Name)}] = o
	}
	o.seen = now
	// Resets of one window compare by the wall clock their fields name,
	// not by this process's monotonic clock.
	named := now.Add(q.Reset).Round(0)
	if unix && q.Reset > 0 {
		o.classify(named, q.Remaining <= kept, sent, now)
	} else if unix {
		o.classify(time.Time{}, q.Remaining <= kept, sent, now)
	}
	if opener {
		// The reset is the instant the field names, to its own precision,
		// unless the quota's windows were seen to begin at their first
		// request.
		o.at, o.limit, o.unix = now.Add(q.Reset), q.Limit, unix
		if unix {
			o.refine(sent, now)
			if o.kind == kindAnchored && o.window == o.ended && !o.refined.IsZero() && o.refined.Before(o.at) {
				o.at = o.refined
			}
		}
	}
	if unix && q.Reset > 0 && o.kind == kindUnknown && q.Remaining == kept+1 && named.Equal(o.named) &&
		o.refined.After(now) && o.refined.Before(named.Add(-clockSlack)) {
		return o.refined
	}
	return time.Time{}
}

// classify reads what a response at now to a request sent at sent, naming
// the reset second named (zero: one already past), tells of the quota's
// windows. Windows first seen ended by probes, well before their named
// seconds, began at their first request, and only windows of their length
// are refined; one seen spent after its refined end resets on the named
// second, and that is not revised.
func (o *opening) classify(named time.Time, spent bool, sent, now time.Time) {
	switch {
	case o.named.IsZero():
	case o.kind != kindClock && named.After(o.named) && now.Before(o.named.Add(-clockSlack)) &&
		!o.refined.IsZero() && !sent.Before(o.refined):
		if o.probes == 0 || o.window != o.ended {
			o.probes, o.ended = 0, o.window
		}
		if o.probes++; o.probes >= anchorProbes {
			o.kind = kindAnchored
		}
	case (named.IsZero() || named.Equal(o.named)) && spent && !o.refined.IsZero() && o.refined.Before(o.named) &&
		!sent.Before(o.refined):
		o.kind = kindClock
	}
	if !named.IsZero() && named.After(o.named) {
		o.named, o.refined = named, time.Time{}
	}
}

// refine sets when the window the request sent at sent opened ends, if it
// began at that request and lasts whole seconds: it ends the same fraction
// past a second as it began. When no second began between sent and now,
// that is the named second less what was left of the second sent was in,
// plus the round trip to be sure, and the window's length is learnt;
// otherwise the length learnt before says (ADR 0164).
func (o *opening) refine(sent, now time.Time) {
	if sent.After(now) {
		return
	}
	if sent.Unix() == now.Unix() {
		begun := sent.Truncate(time.Second)
		if begun.Before(sent) {
			begun = begun.Add(time.Second)
		}
		if w := o.named.Sub(begun); w > 0 {
			o.window, o.refined = w, now.Add(w)
		}
	} else if o.window > 0 {
		o.refined = now.Add(o.window)
	}
}

// extend moves the horizon to at least t. Called under mu.
func (p *Pacer) extend(t time.Time) {
	if n := t.UnixNano(); n > p.horizon.Load() {
		p.horizon.Store(n)
	}
}

// add records a new state, first sweeping the expired ones when their
// number doubled or a second passed: what the pacer keeps stays
// proportional to the quotas spent now, at an amortized constant cost.
func (p *Pacer) add(host string, s *quotaState, now time.Time) {
	if p.hosts == nil {
		p.hosts = make(map[string][]*quotaState)
	}
	p.sweep(now)
	p.hosts[host] = append(p.hosts[host], s)
	p.count++
	p.states.Add(1)
}

// sweep deletes the states and learned resets that hold nothing at now,
// when their number doubled since the last sweep or a second passed: what
// the pacer keeps stays proportional to the quotas in use, at an amortized
// constant cost. Called under mu.
func (p *Pacer) sweep(now time.Time) {
	if p.count+len(p.opened) < p.sweepAt && now.Sub(p.swept) < time.Second {
		return
	}
	var horizon time.Time
	for h, states := range p.hosts {
		for i := 0; i < len(states); i++ {
			if _, _, done := states[i].slot(now); done {
				states = p.remove(h, states, i)
				i--
			} else if l := states[i].last(); l.After(horizon) {
				horizon = l
			}
		}
	}
	p.horizon.Store(horizon.UnixNano())
	maxHold := p.MaxHold
	if maxHold <= 0 {
		maxHold = defaultMaxHold
	}
	for k, o := range p.opened {
		if now.Sub(o.seen) > maxHold {
			delete(p.opened, k)
		}
	}
	p.sweepAt, p.swept = max(64, 2*(p.count+len(p.opened))), now
}

// remove deletes states[i] of host and returns what is left. Called under mu.
func (p *Pacer) remove(host string, states []*quotaState, i int) []*quotaState {
	last := len(states) - 1
	states[i] = states[last]
	states[last] = nil
	states = states[:last]
	if len(states) == 0 {
		delete(p.hosts, host)
	} else {
		p.hosts[host] = states
	}
	p.count--
	p.states.Add(-1)
	return states
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

package simulate

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// Event kinds of scenario 2.
const (
	evIssue   uint8 = iota // a client issues its next request
	evBegin                // a request is about to start an attempt: pacing, then send
	evSend                 // a request sends an attempt after a pacing hold
	evArrive               // an attempt reaches the healthy service
	evOK                   // a 200 reaches the client
	evRefused              // a 503 reaches the client
	evResend               // a re-send's wait is over: ask the breaker, then pacing, then send
)

// epoch is the virtual instant a run starts at. Only differences matter; a
// fixed date keeps the times handed to the retry package deterministic.
var epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// outageSim is one policy's run of scenario 2.
type outageSim struct {
	cfg    *OutageConfig
	policy retry.Policy

	maxAttempts   int
	maxRetryAfter time.Duration

	q        *queue
	rng      *rand.Rand   // network delays and jitter
	arrivals []*rand.Rand // one stream per client: the same requests under every policy
	net      network

	budgets []*budget.Budget  // one per client, or nil
	pacers  []ratelimit.Pacer // one per client, as one per transport; nil without pacing

	breakers []*breaker.Breaker // one per client, as one per facade; nil without overload control

	// the service
	busyUntil   time.Duration // when the requests admitted so far are done
	serviceTime time.Duration // 1/capacity
	refusal     http.Header   // the fields of every 503
	retryAfter  string        // its Retry-After field, read once

	downFrom, downUntil, end time.Duration

	out OutageRun
}

func newOutageSim(cfg *OutageConfig, p OutagePolicy) *outageSim {
	s := &outageSim{
		cfg:         cfg,
		policy:      p.Policy,
		rng:         stream(cfg.Seed, p.Name),
		q:           newQueue(5*time.Millisecond, 8192),
		net:         newNetwork(cfg.NetworkMean, cfg.NetworkStdDev),
		serviceTime: time.Duration(float64(time.Second) / cfg.Capacity),
		downFrom:    cfg.Before,
		downUntil:   cfg.Before + cfg.Down,
		end:         cfg.Before + cfg.Down + cfg.After,
		refusal:     refusalHeader(cfg, !cfg.unannounced),
	}
	s.retryAfter = s.refusal.Get("Retry-After")
	// The zero fields of the policy mean the retry package's defaults; the
	// two the loop itself needs are resolved here, the rest by the
	// package's own functions.
	s.maxAttempts = p.Policy.MaxAttempts
	if s.maxAttempts == 0 {
		s.maxAttempts = retry.DefaultMaxAttempts
	}
	s.maxRetryAfter = p.Policy.MaxRetryAfter
	if s.maxRetryAfter == 0 {
		s.maxRetryAfter = retry.DefaultMaxRetryAfter
	}
	s.arrivals = make([]*rand.Rand, cfg.Clients)
	for c := range s.arrivals {
		s.arrivals[c] = stream(cfg.Seed, "arrivals", uint64(c))
	}
	if t := p.Policy.Budget; t != nil {
		s.policy.Budget = nil // the template is never drawn on
		s.budgets = make([]*budget.Budget, cfg.Clients)
		shared := &budget.Budget{Ratio: t.Ratio, MinPerSecond: t.MinPerSecond, MaxTokens: t.MaxTokens}
		for c := range s.budgets {
			s.budgets[c] = shared
			if !p.SharedBudget {
				s.budgets[c] = &budget.Budget{Ratio: t.Ratio, MinPerSecond: t.MinPerSecond, MaxTokens: t.MaxTokens}
			}
		}
	}
	if p.Policy.Pacer != nil {
		s.pacers = make([]ratelimit.Pacer, cfg.Clients)
	}
	if p.Overload != nil {
		s.breakers = newBreakers(cfg, p, &s.out)
	}
	s.policy.Overload = nil // the loop below asks s.breakers, by virtual time
	s.out.Policy = p.Name
	return s
}

// host is the one host every client of scenario 2 sends to: the key of its
// pacer.
const host = "service.test"

// refusalHeader returns the fields the service sends with every 503: a
// RateLimit quota spent until the reset, in the IETF draft's structured
// form, with, when announce is set, the quota itself in RateLimit-Policy
// (each client's share of the capacity, per second), and a Retry-After when
// configured.
func refusalHeader(cfg *OutageConfig, announce bool) http.Header {
	h := make(http.Header)
	if cfg.Reset > 0 {
		secs := strconv.FormatInt(int64(cfg.Reset/time.Second), 10)
		h.Set("RateLimit", `"default";r=0;t=`+secs)
		if announce {
			perClient := strconv.FormatInt(max(int64(cfg.Capacity)/int64(cfg.Clients), 1), 10)
			h.Set("RateLimit-Policy", `"default";q=`+perClient+`;w=1`)
		}
	}
	if cfg.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatFloat(cfg.RetryAfter.Seconds(), 'f', -1, 64))
	}
	return h
}

func (s *outageSim) run() OutageRun {
	for c := range s.cfg.Clients {
		if at := exponential(s.arrivals[c], s.cfg.Rate); at < s.end {
			s.q.push(at, evIssue, job{client: int32(c)})
		}
	}
	for {
		e, ok := s.q.pop()
		if !ok {
			break
		}
		switch e.kind() {
		case evIssue:
			s.issue(e.at, e.client)
		case evBegin:
			s.begin(e.at, e.job)
		case evSend:
			if s.cfg.trace != nil {
				s.cfg.trace(holdTrace{client: e.client, at: e.at, woke: true})
			}
			s.send(e.at, e.job)
		case evArrive:
			s.arrive(e.at, e.job)
		case evOK:
			s.settle(e.at, e.job, breaker.Success, 0)
			s.finish(e.job, true, nil)
		case evRefused:
			s.refused(e.at, e.job)
		case evResend:
			s.resend(e.at, e.job)
		}
	}
	s.summarize()
	return s.out
}

// issue starts a new request of client c and schedules the client's next.
func (s *outageSim) issue(now time.Duration, c int32) {
	if next := now + exponential(s.arrivals[c], s.cfg.Rate); next < s.end {
		s.q.push(next, evIssue, job{client: c})
	}
	r := job{client: c, after: now >= s.downUntil}
	s.out.Requests++
	bump(&s.out.Offered, now)
	if r.after {
		s.out.AfterRequests++
	}
	if s.budgets != nil {
		s.budgets[c].Deposit() // as the transport does, once per call
	}
	s.begin(now, r)
}

// begin is the top of the transport's attempt loop for a first attempt:
// the client's [ratelimit.Pacer] says how long it must wait for a spent quota,
// and reserves its slot; re-sends take theirs in refused, as the transport
// does.
func (s *outageSim) begin(now time.Duration, r job) {
	if s.breakers != nil && !s.admit(now, &r) {
		return
	}
	if s.pacers != nil && s.hold(now, r) {
		return
	}
	s.send(now, r)
}

// hold asks the client's pacer for the slot of an attempt to be sent at
// instant at, and schedules the attempt after the hold. A
// wait over MaxRetryAfter stops the request, reserving nothing, as
// [retry.ErrRateLimited] does; otherwise the wait is holdWait
// of the pacer's answer: a slot of a spaced release is kept as it is, and a
// hold shared with other held requests is jittered by as much as the pacer
// sized for it. It reports whether the attempt was held or stopped.
func (s *outageSim) hold(at time.Duration, r job) bool {
	h := s.pacers[r.client].Hold(host, "", epoch.Add(at), s.maxRetryAfter)
	if h.Refused {
		s.settle(at, r, breaker.Abandoned, 0)
		s.finish(r, false, &s.out.Stops.RateLimited)
		return true
	}
	if h.Wait <= 0 {
		return false
	}
	u := 0.0
	if h.Jitter > 0 {
		u = s.rng.Float64()
	}
	wait := holdWait(s.policy, h, u)
	if s.cfg.trace != nil {
		s.cfg.trace(holdTrace{client: r.client, at: at, hold: h.Wait, jitter: h.Jitter, wait: wait, r: u, spaced: h.Spaced})
	}
	s.q.push(at+wait, evSend, r)
	return true
}

// send puts an attempt on the network at now, which may be ahead of the
// event being handled when nothing can intervene. While the service is down
// its answer is known the moment the attempt arrives, so the 503 is
// scheduled at once; a healthy service must see arrivals in order, through
// evArrive.
func (s *outageSim) send(now time.Duration, r job) {
	r.attempt++
	at := now + s.net.delay(s.rng)
	bump(&s.out.Load, at)
	if s.down(at) {
		s.out.DownAttempts++
		if r.attempt == 1 {
			s.out.DownFirst++
		}
		s.q.push(at+s.net.delay(s.rng), evRefused, r)
		return
	}
	s.q.push(at, evArrive, r)
}

// arrive is the healthy service: a first-in first-out server completing
// Capacity requests a second, which refuses a request it could not start
// within QueueLimit. A refusal costs it nothing.
func (s *outageSim) arrive(now time.Duration, r job) {
	start := max(now, s.busyUntil)
	if start-now > s.cfg.QueueLimit {
		s.q.push(now+s.net.delay(s.rng), evRefused, r)
		return
	}
	s.busyUntil = start + s.serviceTime
	bump(&s.out.Served, now)
	s.q.push(s.busyUntil+s.net.delay(s.rng), evOK, r)
}

// down reports whether the service refuses everything at instant at: in
// the Down stretch, and with Flap set only in its down halves.
func (s *outageSim) down(at time.Duration) bool {
	if at < s.downFrom || at >= s.downUntil {
		return false
	}
	return s.cfg.Flap <= 0 || (at-s.downFrom)/s.cfg.Flap%2 == 0
}

// refused is the rest of the transport's attempt loop after a 503: read the
// server's hints, decide whether to re-send, and after how long.
func (s *outageSim) refused(at time.Duration, r job) {
	now := epoch.Add(at)
	p := &s.policy
	hint, hasHint := retry.ParseRetryAfter(s.retryAfter, now)
	s.settle(at, r, breaker.Failure, hint)
	r.ticket = nil
	if s.pacers != nil {
		if q, ok := ratelimit.Parse(s.refusal, now); ok {
			s.pacers[r.client].Observe(host, "", q, now, now) // a refusal is news whenever it was sent
			if !hasHint && q.Remaining == 0 && q.Reset > 0 {
				hint, hasHint = q.Reset, true // Retry-After takes precedence
			}
		}
	}
	switch {
	case int(r.attempt) >= s.maxAttempts:
		s.finish(r, false, &s.out.Stops.Exhausted)
		return
	case hasHint && hint > s.maxRetryAfter:
		s.finish(r, false, &s.out.Stops.RetryAfter)
		return
	}
	var wait time.Duration
	if hasHint {
		wait = serverWait(*p, hint, s.rng.Float64())
	} else {
		wait = delay(*p, JitterFull, int(r.attempt), r.prevWait, s.rng.Float64())
	}
	if s.breakers != nil && s.breakers[r.client].Check(now, host, "") != nil {
		s.finish(r, false, &s.out.Stops.Overload) // refused before the wait, the 503 in hand
		return
	}
	if s.budgets != nil && !s.budgets[r.client].Withdraw(now) {
		s.finish(r, false, &s.out.Stops.Budget)
		return
	}
	r.prevWait = wait
	if s.breakers != nil {
		// The re-send asks the breaker when its wait is over, as the
		// transport does, so the breaker sees each client's time move
		// forward only.
		s.q.push(at+wait, evResend, r)
		return
	}
	if s.pacers != nil && s.hold(at+wait, r) {
		return
	}
	// Nothing can change between now and the re-send, so it is put on the
	// network at once, saving an event.
	s.send(at+wait, r)
}

// resend is the transport's re-send once its wait is over: the breaker,
// then the pacer, then the network.
func (s *outageSim) resend(at time.Duration, r job) {
	if !s.admit(at, &r) {
		return
	}
	if s.pacers != nil && s.hold(at, r) {
		return
	}
	s.send(at, r)
}

func (s *outageSim) finish(r job, ok bool, stop *int64) {
	if !ok {
		*stop++
		return
	}
	s.out.Succeeded++
	if r.after {
		s.out.AfterSucceeded++
	}
}

// bump counts one at time at in its bin, growing the series as needed.
func bump(series *[]int64, at time.Duration) {
	i := int(at / Bin)
	for len(*series) <= i {
		*series = append(*series, 0)
	}
	(*series)[i]++
}

// summarize trims the series to the run's stretches and finds the recovery.
// A bin is healthy when the service served at least RecoveredShare of the
// attempts that reached it in the bin, and as many as RecoveredShare of the
// requests offered in it. Goodput alone would call a service that serves at
// capacity while refusing most of a retry storm healthy, because the
// backlog's successes mask the refusals of new requests. Attempts are
// binned by when they reach the service, so a bin compares like with like.
func (s *outageSim) summarize() {
	n := int(s.end / Bin)
	for _, series := range []*[]int64{&s.out.Load, &s.out.Offered, &s.out.Served} {
		for len(*series) < n {
			*series = append(*series, 0)
		}
		*series = (*series)[:n]
	}
	back := int(s.downUntil / Bin)
	lastBad := back - 1
	share := s.cfg.RecoveredShare
	for i := back; i < n; i++ {
		served := float64(s.out.Served[i])
		if served < share*float64(s.out.Offered[i]) || served < share*float64(s.out.Load[i]) {
			lastBad = i
		}
	}
	if lastBad < n-1 || n == back {
		s.out.Recovered = true
		s.out.Recovery = time.Duration(lastBad+1-back) * Bin
	}
	peak := int64(0)
	for _, v := range s.out.Load[back:] {
		peak = max(peak, v)
	}
	s.out.Peak = float64(peak) / (s.cfg.Capacity * Bin.Seconds())
}

package ratelimit

import (
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Window is what is known of one quota window for an ETA: Remaining
// requests until Reset from now, then Limit requests every Period. A
// window whose Limit or Period is not known constrains nothing after its
// reset.
type Window struct {
	Limit     int64
	Period    time.Duration
	Remaining int64
	Reset     time.Duration
}

// maxETASteps bounds the resets ETA walks through; past them the rest of
// the work goes at the sustainable rate.
const maxETASteps = 1 << 20

// ETA returns how long requests take at the earliest, sent as fast as every
// window allows at once: each window gives its remaining requests now and
// its limit again at every reset (ADR 0322). rate, when above 0, is a
// measured rate in requests a second, and the slower of the two counts.
// -1 is returned when the windows never allow the work (a spent window
// whose limit is not known and that never resets).
func ETA(requests int64, windows []Window, rate float64) time.Duration {
	quota := quotaETA(requests, windows)
	if rate > 0 && requests > 0 {
		measured := time.Duration(float64(requests) / rate * float64(time.Second))
		if quota >= 0 && measured > quota {
			return measured
		}
	}
	return quota
}

// quotaETA walks the windows from reset to reset: at each instant it sends
// what every window has left, then moves to the next reset of a spent one.
func quotaETA(requests int64, windows []Window) time.Duration {
	left := make([]int64, len(windows))
	next := make([]time.Duration, len(windows))
	for i, w := range windows {
		left[i], next[i] = max(w.Remaining, 0), w.Reset
		switch {
		case w.Reset <= 0 && !w.periodic():
			left[i], next[i] = math.MaxInt64, -1 // nothing known to wait for
		case w.Reset <= 0:
			next[i] = w.Period // a reset not said: a window away at most
		}
	}
	var t time.Duration
	for step := 0; requests > 0; step++ {
		n := requests
		for _, l := range left {
			n = min(n, l)
		}
		requests -= n
		for i := range left {
			left[i] -= n
		}
		if requests == 0 {
			break
		}
		at := time.Duration(-1)
		for i := range left {
			if left[i] == 0 && next[i] > t && (at < 0 || next[i] < at) {
				at = next[i]
			}
		}
		if at < 0 {
			return -1
		}
		if step >= maxETASteps {
			return at + sustained(requests, windows)
		}
		t = at
		for i, w := range windows {
			for next[i] > 0 && next[i] <= t {
				if !w.periodic() {
					left[i], next[i] = math.MaxInt64, -1
					break
				}
				left[i] = w.Limit
				next[i] += w.Period
			}
		}
	}
	return t
}

func (w Window) periodic() bool { return w.Limit > 0 && w.Period > 0 }

// sustained is how long requests take at the slowest window's rate.
func sustained(requests int64, windows []Window) time.Duration {
	var slowest float64 // requests a second
	for _, w := range windows {
		if r := float64(w.Limit) / w.Period.Seconds(); w.periodic() && (slowest == 0 || r < slowest) {
			slowest = r
		}
	}
	if slowest == 0 {
		return 0
	}
	return time.Duration(float64(requests) / slowest * float64(time.Second))
}

// maxKnown bounds the windows a Pacer keeps for its ETAs.
const maxKnown = 4096

// knownWindows is what a Pacer last heard of every window, for ETAs.
type knownWindows struct {
	mu sync.Mutex
	m  map[quotaKey]*known
}

type known struct {
	q      Quota
	at     time.Time
	routes []string // for a named quota, the routes that drew it
	all    bool
}

// record keeps q, the latest news of its window. A window of an unknown
// limit and period that is not spent says nothing an ETA uses.
func (k *knownWindows) record(host, route string, q Quota, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := quotaKey{host, q.Name}
	w := k.m[key]
	if w == nil {
		if len(k.m) >= maxKnown {
			clear(k.m) // forgotten: the next responses tell them again
		}
		if k.m == nil {
			k.m = make(map[quotaKey]*known)
		}
		w = &known{}
		k.m[quotaKey{strings.Clone(host), strings.Clone(q.Name)}] = w
	}
	w.q, w.at = q, now
	if q.Name != "" && !w.all && !slices.Contains(w.routes, route) {
		if len(w.routes) < maxRoutes {
			w.routes = append(w.routes, strings.Clone(route))
		} else {
			w.all, w.routes = true, nil
		}
	}
}

// windows returns the windows a request to host on route draws, as known
// at now, less reserve of each limit.
func (k *knownWindows) windows(host, route string, reserve float64, now time.Time) []Window {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []Window
	for key, w := range k.m {
		if key.host != host || !(key.name == "" || w.all || slices.Contains(w.routes, route)) {
			continue
		}
		q, kept := w.q, reserved(w.q.Limit, reserve)
		win := Window{Limit: q.Limit - kept, Period: q.Window, Remaining: max(q.Remaining-kept, 0)}
		if q.Reset > 0 {
			reset := w.at.Add(q.Reset)
			for win.periodic() && !reset.After(now) {
				reset, win.Remaining = reset.Add(win.Period), win.Limit
			}
			win.Reset = max(reset.Sub(now), 0)
		}
		out = append(out, win)
	}
	return out
}

// reserved is the part of limit a reserve keeps for other users of the key.
func reserved(limit int64, reserve float64) int64 {
	if reserve <= 0 || reserve > MaxReserve || limit <= 0 {
		return 0
	}
	return int64(math.Floor(reserve * float64(limit)))
}

// ETA returns how long requests to host on route take at the earliest
// from now, by the windows the pacer last heard of and its Reserve, and at
// a measured rate (requests a second; 0: not measured) when that is
// slower: see [ETA]. Without a window known it is the measured estimate,
// or 0.
func (p *Pacer) ETA(host, route string, requests int64, rate float64, now time.Time) time.Duration {
	return ETA(requests, p.known.windows(host, route, p.reserve(), now), rate)
}

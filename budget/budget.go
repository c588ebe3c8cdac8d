package budget

import (
	"sync"
	"sync/atomic"
	"time"
)

// Budget defaults. A client may re-send about one request in ten (the
// per-client budget that kept load growth near 1.1x in published production
// experience, against nearly 3x for unbudgeted retries), and never fewer than
// a few re-sends a second, so a client with little traffic still rides out
// a blip: at one request a minute the ratio alone would allow one re-send
// every ten minutes.
const (
	DefaultRatio        = 0.1
	DefaultMinPerSecond = 3.0
	DefaultMaxTokens    = 10.0
)

// budgetWindow is the stretch over which the ratio and the floor are
// compared: long enough that a busy client's traffic, Poisson or bursty,
// keeps its ratio above the floor, short enough that a quiet client earns
// its floor soon after it goes quiet.
const budgetWindow = 10 * time.Second

// A Budget bounds re-sends across every call that shares it, so retries
// cannot multiply load when a service is weakest. It is a token bucket: each
// first attempt deposits Ratio of a token, each re-send withdraws one. Over
// each ten-second window the bucket is also topped up to the floor,
// MinPerSecond a second: the two do not add up, the window gains whichever
// is larger, so the floor only matters when traffic is light and a busy
// client re-sends at most Ratio of its traffic. First attempts are never
// blocked.
//
// The zero value is ready to use with the defaults; a nil *Budget allows
// every re-send. Share one Budget per client (or per host) among the
// transports that draw on it. With a [Store] the bucket is shared by every
// process using the store (see [Budget.Store]).
type Budget struct {
	// Ratio is the share of first attempts that may be re-sent (0: 0.1).
	Ratio float64
	// MinPerSecond is the floor: re-sends a second allowed whatever the
	// traffic (0: 3; negative: no floor).
	MinPerSecond float64
	// MaxTokens caps the re-sends that can be banked for a burst (0: 10).
	MaxTokens float64
	// Store, when set, holds the bucket for a whole fleet: first attempts
	// are credited to it in batches and re-sends are leased from it a few
	// at a time. While it fails or is slow the in-process bucket answers,
	// which keeps counting all along so it is ready at once.
	Store Store

	shared sharedBudget

	deposits atomic.Int64 // first attempts seen, ever

	mu          sync.Mutex
	started     bool
	tokens      float64
	seen        int64     // deposits already credited to tokens
	windowStart time.Time // start of the current window
	credited    float64   // tokens credited in the current window
	refused     int64
	allowed     int64
}

// Deposit records a first attempt. On a nil *Budget it does nothing.
func (b *Budget) Deposit() {
	if b == nil {
		return
	}
	b.deposits.Add(1)
	if b.Store != nil {
		b.shared.deposit(b)
	}
}

// Withdraw asks for one re-send at time now and reports whether the budget
// allows it. A nil *Budget allows it.
func (b *Budget) Withdraw(now time.Time) bool {
	if b == nil {
		return true
	}
	if b.Store != nil {
		if allowed, answered := b.shared.withdraw(b, now); answered {
			b.mu.Lock()
			if allowed {
				b.allowed++
			} else {
				b.refused++
			}
			b.mu.Unlock()
			return allowed
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if b.tokens >= 1 {
		b.tokens--
		b.allowed++
		return true
	}
	b.refused++
	return false
}

// Release credits the first attempts not yet told to the [Store] and hands
// back the re-sends leased from it that no request took, as a program that
// is done does, so they go to the rest of its fleet. A retry transport
// calls it when its idle connections are closed. Without a Store, or on a
// nil *Budget, it does nothing.
func (b *Budget) Release() {
	if b != nil && b.Store != nil {
		b.shared.release(b)
	}
}

// refill credits new deposits and the floor; the caller holds b.mu.
func (b *Budget) refill(now time.Time) {
	ratio, floor, maxTokens := b.params()
	total := b.deposits.Load()
	if !b.started {
		b.started = true
		b.windowStart = now
		b.seen = total
		b.tokens = min(float64(total)*ratio, maxTokens)
		return
	}
	fromTraffic := float64(total-b.seen) * ratio
	b.seen = total
	if elapsed := now.Sub(b.windowStart); elapsed >= budgetWindow {
		// Settle the window that ended: it is owed the floor for all of it.
		// Traffic since the last refill is counted in it too.
		owed := max(floor*budgetWindow.Seconds()-b.credited-fromTraffic, 0)
		b.tokens = min(b.tokens+fromTraffic+owed, maxTokens)
		fromTraffic = 0
		b.windowStart = b.windowStart.Add(budgetWindow)
		if now.Sub(b.windowStart) >= budgetWindow {
			// A longer quiet spell: whole windows of floor, far above the cap.
			b.tokens = min(b.tokens+floor*budgetWindow.Seconds(), maxTokens)
			b.windowStart = now
		}
		b.credited = 0
	}
	owed := max(floor*now.Sub(b.windowStart).Seconds()-b.credited-fromTraffic, 0)
	credit := fromTraffic + owed
	b.credited += credit
	b.tokens = min(b.tokens+credit, maxTokens)
}

func (b *Budget) params() (ratio, floor, maxTokens float64) {
	ratio, floor, maxTokens = b.Ratio, b.MinPerSecond, b.MaxTokens
	if ratio <= 0 {
		ratio = DefaultRatio
	}
	if floor == 0 {
		floor = DefaultMinPerSecond
	}
	floor = max(floor, 0)
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	return ratio, floor, maxTokens
}

// Stats is a snapshot of a [Budget].
type Stats struct {
	FirstAttempts int64   // deposits
	Allowed       int64   // re-sends allowed
	Refused       int64   // re-sends refused
	Tokens        float64 // re-sends available at the snapshot
}

// Stats returns a snapshot at time now.
func (b *Budget) Stats(now time.Time) Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	return Stats{FirstAttempts: b.deposits.Load(), Allowed: b.allowed, Refused: b.refused, Tokens: b.tokens}
}

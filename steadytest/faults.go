package steadytest

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

// A FaultKind is one way a request can go wrong.
type FaultKind uint8

const (
	// None: the request is served normally.
	None FaultKind = iota
	// Status: an error status ([Fault.Status], default 503) with an
	// optional Retry-After. 502 and 504 carry a small HTML page, as the
	// gateways that send them do; other statuses a JSON error.
	Status
	// Hang: nothing is sent, not even headers, for [Fault.For]; then the
	// request is served normally. With For zero the server stays silent
	// until the client gives up or the server is closed.
	Hang
	// Stall: the headers (with the full Content-Length) and the first
	// [Fault.After] bytes of the body are sent, then nothing for
	// [Fault.For]; then the rest. With For zero the silence lasts until the
	// client gives up or the server is closed.
	Stall
	// Reset: the connection is reset (TCP RST) before any byte of the
	// response is sent.
	Reset
	// ResetMidBody: the headers and the first [Fault.After] bytes of the
	// body are sent, then the connection is reset.
	ResetMidBody
	// Truncate: the headers declare the full Content-Length but only the
	// first [Fault.After] bytes of the body are sent before the connection
	// is closed cleanly, so the client reads an unexpected EOF.
	Truncate
	// Drip: the body is sent [Fault.Chunk] bytes at a time with
	// [Fault.Every] between writes: slow, but steady and complete.
	Drip
	// Redirect: a redirect ([Fault.Status], default 307) to the same URL
	// on another host (see [ServerOptions.ForeignHost]).
	Redirect
	// ForeignNext: the page is served, but its next link points at another
	// host. Applies only to pages that have a next page, in the styles that
	// link pages (not [Cursor]); elsewhere the request is served normally
	// and logged with no fault.
	ForeignNext
	// UserinfoNext: the page is served, but its next link carries userinfo
	// (http://user:pass@host/...). Applies where ForeignNext does.
	UserinfoNext
	// RepeatNext: the page is served, but its next link (or cursor) points
	// at the page just served, so a client that follows links blindly loops
	// forever. It applies to the last page too, which then claims a next
	// page. The next-link faults do not apply to lookups.
	RepeatNext
	// QuotaExceeded is never configured: the request log uses it for a
	// request refused with 429 because the [Quota] was spent.
	QuotaExceeded
)

var kindNames = [...]string{
	None: "none", Status: "status", Hang: "hang", Stall: "stall", Reset: "reset",
	ResetMidBody: "reset-mid-body", Truncate: "truncate", Drip: "drip",
	Redirect: "redirect", ForeignNext: "foreign-next", UserinfoNext: "userinfo-next",
	RepeatNext: "repeat-next", QuotaExceeded: "quota-exceeded",
}

// String returns the kind's name as [ParseFaultKind] accepts it, such as
// "reset-mid-body".
func (k FaultKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("FaultKind(%d)", uint8(k))
}

// ParseFaultKind returns the kind named s, as [FaultKind.String] writes it.
func ParseFaultKind(s string) (FaultKind, error) {
	for i, n := range kindNames {
		if strings.EqualFold(s, n) && FaultKind(i) != QuotaExceeded {
			return FaultKind(i), nil
		}
	}
	return 0, &OptionsError{Field: "Fault.Kind", Reason: fmt.Sprintf("unknown fault %q", s)}
}

// A Fault is what happens to one request. Fields that do not apply to the
// Kind are ignored; a zero field means the documented default.
type Fault struct {
	Kind FaultKind

	// Status is the status of a [Status] fault (default 503; any 4xx or
	// 5xx) or of a [Redirect] (default 307; any 3xx).
	Status int
	// RetryAfter, when positive, adds a Retry-After header to a [Status]
	// fault: whole seconds, rounded up.
	RetryAfter time.Duration
	// RetryAfterDate sends RetryAfter as an HTTP-date (now plus RetryAfter,
	// rounded up to the next whole second) instead of seconds.
	RetryAfterDate bool

	// For is how long a [Hang] or [Stall] lasts before the server carries
	// on. Zero means until the client gives up or the server is closed.
	For time.Duration
	// After is how many body bytes a [Stall], [ResetMidBody] or [Truncate]
	// sends first. Zero means half the body; it is capped so that at least
	// one byte is withheld.
	After int
	// Chunk is how many bytes a [Drip] sends per write. Zero means 1,024.
	Chunk int
	// Every is the pause between the writes of a [Drip]. Zero means 10ms.
	Every time.Duration
}

func (f Fault) String() string {
	switch f.Kind {
	case Status:
		s := fmt.Sprintf("status %d", f.status())
		if f.RetryAfter > 0 {
			form := "seconds"
			if f.RetryAfterDate {
				form = "date"
			}
			s += fmt.Sprintf(" retry-after %v (%s)", f.RetryAfter, form)
		}
		return s
	case Hang, Stall:
		if f.For > 0 {
			return fmt.Sprintf("%v for %v", f.Kind, f.For)
		}
		return f.Kind.String()
	case Redirect:
		return fmt.Sprintf("redirect %d", f.status())
	}
	return f.Kind.String()
}

func (f Fault) status() int {
	if f.Status != 0 {
		return f.Status
	}
	if f.Kind == Redirect {
		return http.StatusTemporaryRedirect
	}
	return http.StatusServiceUnavailable
}

func (f Fault) chunk() int {
	if f.Chunk > 0 {
		return f.Chunk
	}
	return 1024
}

func (f Fault) every() time.Duration {
	if f.Every > 0 {
		return f.Every
	}
	return 10 * time.Millisecond
}

// cut returns how many of n body bytes go out before a mid-body fault: After,
// or half, and always fewer than n so the fault is visible (n >= 1).
func (f Fault) cut(n int) int {
	c := f.After
	if c <= 0 {
		c = n / 2
	}
	return min(c, n-1)
}

func (f Fault) validate(field string) error {
	bad := func(format string, args ...any) error {
		return &OptionsError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case int(f.Kind) >= len(kindNames) || f.Kind == QuotaExceeded:
		return bad("unknown fault kind %d", f.Kind)
	case f.Kind == Status && f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return bad("status %d is not a 4xx or 5xx", f.Status)
	case f.Kind == Redirect && f.Status != 0 && (f.Status < 300 || f.Status > 399):
		return bad("redirect status %d is not a 3xx", f.Status)
	case f.RetryAfter < 0:
		return bad("RetryAfter %v is negative", f.RetryAfter)
	case f.For < 0:
		return bad("For %v is negative", f.For)
	case f.After < 0:
		return bad("After %d is negative", f.After)
	case f.Chunk < 0:
		return bad("Chunk %d is negative", f.Chunk)
	case f.Every < 0:
		return bad("Every %v is negative", f.Every)
	}
	return nil
}

// A Chance is a fault drawn with probability P (0..1) on each request.
type Chance struct {
	P     float64
	Fault Fault
}

// A Call describes one data request to a [Faults.Rule].
type Call struct {
	Seq     int    // 1-based arrival number among data requests
	Path    string // ItemsPath or LookupPath
	Offset  int    // first row of the page (0-based); 0 for lookups
	Limit   int    // page size; the number of ids for lookups
	Attempt int    // 1-based: how many times this page has been requested, this time included
}

// Faults say which data requests (to [ItemsPath] and [LookupPath]) fail.
// For each request the first of these that names a fault applies: Script by
// arrival number, then Rule, then a draw from Mix. The zero value injects no
// fault and sets no quota.
//
// A draw from Mix is a pure function of Seed, the page requested (its offset
// and limit, or the ids of a lookup) and how many times that page has been
// requested before, not of the order in which requests arrive. The same seed
// therefore gives the same faults to the same requests even when clients
// fetch pages concurrently. Script is keyed by arrival order, which only a
// sequential client controls.
type Faults struct {
	// Seed selects the draws from Mix.
	Seed uint64
	// Mix lists faults drawn at random; their probabilities must sum to at
	// most 1. The rest of the time the request is served normally.
	Mix []Chance
	// Script maps the 1-based arrival number of a data request to its fault.
	Script map[int]Fault
	// Rule, when set, decides faults by any property of the [Call]. A Kind
	// of None passes the decision on to Mix. It must be safe for concurrent
	// use.
	Rule func(Call) Fault
	// Quota limits how many data requests each window admits.
	Quota Quota
}

func (f Faults) validate() error {
	sum := 0.0
	for i, c := range f.Mix {
		field := fmt.Sprintf("Faults.Mix[%d]", i)
		if math.IsNaN(c.P) || c.P < 0 || c.P > 1 {
			return &OptionsError{Field: field + ".P", Reason: fmt.Sprintf("probability %v is not within 0..1", c.P)}
		}
		sum += c.P
		if err := c.Fault.validate(field + ".Fault"); err != nil {
			return err
		}
	}
	if sum > 1+1e-9 {
		return &OptionsError{Field: "Faults.Mix", Reason: fmt.Sprintf("probabilities sum to %v, above 1", sum)}
	}
	for seq, fault := range f.Script {
		field := fmt.Sprintf("Faults.Script[%d]", seq)
		if seq < 1 {
			return &OptionsError{Field: field, Reason: "request numbers start at 1"}
		}
		if err := fault.validate(field); err != nil {
			return err
		}
	}
	return f.Quota.validate()
}

// decide returns the fault for call. page identifies the page requested.
func (f *Faults) decide(call Call, page uint64) Fault {
	if fault, ok := f.Script[call.Seq]; ok {
		return fault
	}
	if f.Rule != nil {
		if fault := f.Rule(call); fault.Kind != None {
			return fault
		}
	}
	if len(f.Mix) == 0 {
		return Fault{}
	}
	u := unit(draw(f.Seed, page, call.Attempt))
	for _, c := range f.Mix {
		if u < c.P {
			return c.Fault
		}
		u -= c.P
	}
	return Fault{}
}

// draw mixes the seed, the page and the attempt number into 64 bits. It is
// a pure function so that concurrent arrivals cannot change a fault; see
// docs/adr/0050.
func draw(seed, page uint64, attempt int) uint64 {
	return mix64(seed ^ mix64(page^mix64(uint64(attempt)+0x9e3779b97f4a7c15)))
}

// unit maps 64 random bits to [0, 1) using the top 53.
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// mix64 is the splitmix64 finaliser: every input bit affects every output
// bit, so neighbouring pages and attempts draw unrelated values.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// pageKey hashes the parts that identify a page with 64-bit FNV-1a.
func pageKey(parts ...string) uint64 {
	h := uint64(14695981039346656037)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= 1099511628211
		}
		h ^= 0xff // separator, so ("ab","c") differs from ("a","bc")
		h *= 1099511628211
	}
	return h
}

package event

import (
	"context"
	"time"
)

// Kind says what an [Event] reports.
type Kind uint8

const (
	// RequestStarted: a logical request (all its attempts) begins.
	RequestStarted Kind = iota + 1
	// RetryScheduled: an attempt failed and another will be sent after Wait,
	// for Reason (WaitBackoff, WaitServerHint, WaitRateLimited).
	RetryScheduled
	// RequestFinished: an attempt produced the response handed to the caller.
	RequestFinished
	// Stopped: retrying ended without success; Reason says why.
	Stopped
	// Waiting: a request is held before its attempt (rate-limit pacing);
	// Wait and Reason say for how long and why.
	Waiting
	// PageReceived: a page walk received page Done, with Items and Bytes.
	PageReceived
	// SubrequestDone: a fan-out finished sub-request Done of Total.
	SubrequestDone
	// QuotaSeen: a response that is re-sent or stopped on carried
	// rate-limit headers: Remaining requests until Reset. The quota of the
	// response handed to the caller rides on its RequestFinished instead
	// (Quota set): one event a response, not two. Read both with
	// [Event.HasQuota].
	QuotaSeen
	// AttemptStarted: attempt Attempt of a request is about to be sent. It
	// goes only to a [Tracer]'s StartAttempt, never to Report, so renderers
	// and logs never see it.
	AttemptStarted
	// Resumed: the work continues an earlier run that had received Done
	// pages holding Items rows (and Bytes bytes). Renderers count them as
	// done, so shares reach 100%, and leave them out of rates and ETAs.
	Resumed
	// BreakerChanged: the overload control of Host changed (package
	// breaker). Reason is the circuit's new state ("closed", "open",
	// "half-open"), or "limit" when only the concurrency limit or the
	// quota learned from headerless 429s changed. For "open", Wait is the
	// time until probes are let through, and Done of Total first attempts
	// failed (0 of 0: a probe failed). For "limit", Total is the
	// concurrency limit (0 for none), Done the sends a window of the
	// host's limiter serves and Wait that window (0 while unknown).
	BreakerChanged
	// Parked: the work saved its state to continue when a quota resets,
	// Wait from Time, longer than the caller would wait between attempts.
	// Reason is how it continues: ParkWait (it sleeps until then) or
	// ParkExit (it ends, and a later run continues); Done and Items are
	// the pages and rows saved.
	Parked
)

func (k Kind) String() string {
	switch k {
	case RequestStarted:
		return "request started"
	case RetryScheduled:
		return "retry scheduled"
	case RequestFinished:
		return "request finished"
	case Stopped:
		return "stopped"
	case Waiting:
		return "waiting"
	case PageReceived:
		return "page received"
	case SubrequestDone:
		return "sub-request done"
	case QuotaSeen:
		return "quota seen"
	case AttemptStarted:
		return "attempt started"
	case Resumed:
		return "resumed"
	case BreakerChanged:
		return "breaker changed"
	case Parked:
		return "parked"
	}
	return "unknown"
}

// Reasons a wait is taken. Stop reasons are the text of the retry package's
// sentinel errors ("attempts exhausted", "stalled", ...).
const (
	WaitBackoff     = "backoff"
	WaitServerHint  = "server hint"
	WaitRateLimited = "rate limited"
	// WaitResume files the wait before a broken body is continued with a
	// Range request; the event's Reason reads "resume at byte k" and its
	// Bytes is k.
	WaitResume = "resume"
	// WaitOverload files a hold of the per-host overload control (the
	// breaker's spacing or its open circuit), not of a quota.
	WaitOverload = "overload"
)

// How parked work continues ([Parked]'s Reason).
const (
	ParkWait = "wait"
	ParkExit = "exit"
)

// An Event is one thing worth reporting. Fields that do not apply to a Kind
// are zero.
type Event struct {
	Kind Kind
	// Quota is set on a RequestFinished whose response carried rate-limit
	// headers: Remaining and Reset then say what they did. (Next to Kind,
	// it takes no room: every event is copied on the request path.)
	Quota    bool
	Time     time.Time
	Method   string
	URL      string // redacted
	Host     string
	Attempt  int           // 1-based attempt number, for request events
	Status   int           // HTTP status of the attempt, 0 when it failed without one
	ErrClass string        // short class of a failure without a response: "refused", "reset", "timeout", ...
	Err      string        // redacted error text
	Wait     time.Duration // planned wait, for RetryScheduled and Waiting
	Reason   string        // why it waits or why it stopped
	Items    int64         // items on a page, or rows so far
	Bytes    int64         // bytes of a page
	Done     int           // page index (1-based) or sub-requests done
	Total    int           // sub-requests in all, 0 when unknown
	// Remaining and Reset describe a quota (QuotaSeen, or RequestFinished
	// with Quota set); Remaining is -1 when the server did not say.
	Remaining int64
	Reset     time.Duration

	// MaxAttempts is the most attempts the policy allows for the request
	// (request events), 0 when unknown or unbounded; renderers show the
	// retry count against it.
	MaxAttempts int
	// TotalItems is the number of items the whole walk will yield, when the
	// server said so (PageReceived); 0 when unknown.
	TotalItems int64
	// ETA is how long the rest of the walk is estimated to take
	// (PageReceived): the pages left by the announced total, at the
	// sustainable rate of every quota window known and at the measured
	// rate, whichever is slower; 0 when unknown or nothing is left.
	ETA time.Duration

	// Context is the context of the work the event is about, so that an
	// adapter can attach it to the caller's trace: for the events of one
	// attempt (from AttemptStarted to its RetryScheduled, RequestFinished or
	// Stopped, and the QuotaSeen between), the attempt's context, as a
	// [Tracer] returned it; for the other request events, the request's
	// own; for PageReceived, the walk's; for SubrequestDone, the fan-out's.
	// Renderers ignore it. It is nil for events made by hand.
	Context context.Context
	// Stop is the stop reason itself (Stopped): one of the retry package's
	// sentinel errors, or the context's error after cancellation, for
	// errors.Is. Reason holds its text, with detail.
	Stop error
}

// HasQuota reports whether e tells a response's quota: a QuotaSeen, or a
// RequestFinished with Quota set.
func (e *Event) HasQuota() bool { return e.Kind == QuotaSeen || e.Quota }

// A Reporter receives events. Report must be safe for concurrent use and
// should return quickly: it is called on the request path.
type Reporter interface {
	Report(Event)
}

// ReporterFunc adapts a function to a [Reporter].
type ReporterFunc func(Event)

// Report calls f(e).
func (f ReporterFunc) Report(e Event) { f(e) }

// Emit sends e to r when r is not nil, stamping the time when it is unset.
func Emit(r Reporter, e Event) {
	if r == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	r.Report(e)
}

// A Tracer is a [Reporter] that is also told when each attempt starts and
// picks the context the attempt is sent with, so that a tracing adapter can
// make the attempt's span the parent of whatever the layers below record
// and propagate. The retrying transport calls StartAttempt right before
// handing an attempt on, with an AttemptStarted event whose Context is the
// request's; the returned context, which must be derived from e.Context
// (cancellation flows through it), is the attempt's, and the attempt's
// events carry it. A nil result means e.Context. StartAttempt is called on
// the request path, concurrently, and must return quickly.
type Tracer interface {
	Reporter
	StartAttempt(e Event) context.Context
}

// Multi returns a reporter that passes every event to each non-nil reporter.
// When some of them are [Tracer]s, so is the result: each derives the
// attempt's context from the one before, in order.
func Multi(rs ...Reporter) Reporter {
	var keep []Reporter
	for _, r := range rs {
		if r != nil {
			keep = append(keep, r)
		}
	}
	switch len(keep) {
	case 0:
		return nil
	case 1:
		return keep[0]
	}
	var tracers []Tracer
	for _, r := range keep {
		if t, ok := r.(Tracer); ok {
			tracers = append(tracers, t)
		}
	}
	if len(tracers) > 0 {
		return multiTracer{keep, tracers}
	}
	return ReporterFunc(func(e Event) {
		for _, r := range keep {
			r.Report(e)
		}
	})
}

type multiTracer struct {
	all     []Reporter
	tracers []Tracer
}

func (m multiTracer) Report(e Event) {
	for _, r := range m.all {
		r.Report(e)
	}
}

func (m multiTracer) StartAttempt(e Event) context.Context {
	for _, t := range m.tracers {
		if ctx := t.StartAttempt(e); ctx != nil {
			e.Context = ctx
		}
	}
	return e.Context
}

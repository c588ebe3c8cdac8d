package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

// Parking (ADR 0331): a harvest stopped by a wait longer than
// --max-retry-after (a quota's reset, a server's Retry-After) saves its
// state with the instant it may continue, resume_at, and then sleeps until
// then (--park wait) or exits 5 (--park exit). Without --park it exits 4,
// as before, and saves no resume_at: the user may know better. A run given
// --resume before a saved resume_at waits for it instead of drawing a
// refusal.

// Values of --park.
const (
	parkOff  = ""
	parkWait = "wait"
	parkExit = "exit"
)

// parking is what --park, --json-status and --max-retry-after ask of a
// harvest.
type parking struct {
	mode   string
	status string        // --json-status FILE, "" for none
	limit  time.Duration // --max-retry-after: the longest wait slept off without --park wait
}

// addParkFlags registers --park and --json-status on harvest.
func addParkFlags(cmd *cobra.Command, pk *parking) {
	cmd.Flags().StringVar(&pk.mode, "park", "", "when a quota resets later than --max-retry-after: wait (save the state, sleep until the reset, continue) or exit (save the state, print resume_at, exit 5); needs -o")
	cmd.Flags().StringVar(&pk.status, "json-status", "", "write how the harvest ended (status, exit code, resume_at, rows, pages) to this file as JSON")
	completeValues(cmd, "park", "wait\tsleep until the quota resets, then continue", "exit\tsave the state and exit 5 with resume_at")
}

// check refuses a --park the harvest cannot keep.
func (pk *parking) check(out string) error {
	switch pk.mode {
	case parkOff, parkWait, parkExit:
	default:
		return usagef("--park %s: want wait or exit", quoteIfNeeded(pk.mode))
	}
	if pk.mode != parkOff && out == "" {
		return usagef("--park %s needs -o FILE, a regular file: only a harvest into one saves a state to continue from", pk.mode)
	}
	if pk.status == "" {
		return nil
	}
	if pk.status == "-" || strings.HasSuffix(pk.status, "/") {
		return usagef("--json-status %s: want a file name", quoteIfNeeded(pk.status))
	}
	if out != "" {
		status, _ := filepath.Abs(pk.status)
		for _, own := range []string{out, partialPath(out), statePath(out), lockPath(out)} {
			if p, _ := filepath.Abs(own); p == status {
				return usagef("--json-status %s is the harvest's own file; name another", quoteIfNeeded(pk.status))
			}
		}
	}
	return nil
}

// maxResumeAhead bounds how far ahead a saved resume_at is believed: no
// quota announced is longer (ratelimit.MaxPeriod), so one further off is
// a damaged state or a clock set back, not a wait to serve.
const maxResumeAhead = 24*time.Hour + time.Minute

// parkedError is a harvest that saved its state and exits 5 until a
// quota resets.
type parkedError struct {
	at    time.Time
	cause string // what resets then
	state string
	err   error // what stopped the walk; nil when it never started
}

// Error says when and why, not the stop's own text: the park is the
// outcome, and the refusal it answers is in Unwrap.
func (e *parkedError) Error() string {
	return "parked until " + rfc3339(e.at) + " (resume_at " + rfc3339(e.at) + "): " + e.cause +
		" then, later than --max-retry-after allows; progress saved in " + e.state +
		", run the same command with --resume at or after resume_at"
}

func (e *parkedError) Unwrap() error { return e.err }

// rfc3339 writes t in UTC to the second, as resume_at is given.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// resumeTolerance is how far past a whole second a stop's resume instant
// may fall and still be that second: the pacer computes the reset a
// header names in whole seconds exactly, and the clock read at the stop
// comes a moment after it.
const resumeTolerance = 20 * time.Millisecond

// resumeAt is when a walk stopped at now for a wait may continue: the
// instant rounded up to a whole second, never before it (bar the
// tolerance).
func resumeAt(now time.Time, wait time.Duration) time.Time {
	t := now.Add(wait - resumeTolerance)
	if r := t.Truncate(time.Second); r.Before(t) {
		return r.Add(time.Second)
	}
	return t
}

// parkWaitOf returns the wait that stopped a walk with err and what it
// waits for, when it is one parking can serve: a quota's reset the pacer
// would not hold for, or a Retry-After above the cap.
func parkWaitOf(err error) (time.Duration, string, bool) {
	var re *retry.Error
	if errors.As(err, &re) {
		switch {
		case errors.Is(re.Reason, retry.ErrRateLimited) && re.Wait > 0:
			return re.Wait, "a quota's window resets", true
		case errors.Is(re.Reason, retry.ErrRetryAfter) && re.RetryAfter > 0:
			return re.RetryAfter, "the server's Retry-After ends", true
		}
	}
	var rle *rateLimitedError
	if errors.As(err, &rle) && rle.wait > 0 {
		return rle.wait, "the server's Retry-After ends", true
	}
	return 0, "", false
}

// runParked runs the harvest under --park: it waits for a saved resume_at
// before a resumed run, and parks a run stopped by a long wait.
func (j *job) runParked(ctx context.Context, rep event.Reporter, pk *parking) (res result, err error) {
	start, slept := time.Now(), false
	defer func() { res.elapsed = time.Since(start) }()
	walkRep := rep
	if all := j.client.Options().Reporter; all != nil {
		rep = all // the park and wait events go to telemetry too, not only to the renderer
	}
	for {
		parked, before, err := j.waitResumeAt(ctx, rep, pk)
		if err != nil {
			return res, err
		}
		res, err = j.run(ctx, walkRep)
		if err == nil {
			return res, nil
		}
		if parked && res.pages == before {
			if again, xerr := j.cursorExpired(err, before); xerr != nil || again {
				if xerr != nil {
					return res, xerr
				}
				continue
			}
		}
		wait, cause, ok := parkWaitOf(err)
		if !ok || j.out == "" || pk.mode == parkOff {
			return res, err // without --park, exit 4: a --resume tries at once
		}
		at := resumeAt(j.stoppedAt, wait)
		st, lerr := loadState(statePath(j.out))
		if lerr != nil || st == nil {
			return res, err // no state to continue from: the error says why
		}
		st.ResumeAt = rfc3339(at)
		if serr := st.save(statePath(j.out)); serr != nil {
			return res, errors.Join(err, serr)
		}
		switch {
		case pk.mode == parkWait && (!slept || res.pages > before) && !pastDeadline(ctx, at):
			slept = true
			now := time.Now()
			event.Emit(rep, event.Event{Kind: event.Parked, Time: now, Reason: event.ParkWait, Wait: at.Sub(now),
				Done: res.pages, Items: res.rows, Context: ctx})
			j.resume, j.force = true, false
			j.continued, j.detected = true, nil // said once, counted once
			continue
		default:
			now := time.Now()
			event.Emit(rep, event.Event{Kind: event.Parked, Time: now, Reason: event.ParkExit, Wait: at.Sub(now),
				Done: res.pages, Items: res.rows, Context: ctx})
			return res, &parkedError{at: at, cause: cause, state: statePath(j.out), err: err}
		}
	}
}

// pastDeadline reports whether ctx ends (--max-time) before at: a wait
// that cannot end before the deadline is not started, as no wait is, and
// the harvest stays parked.
func pastDeadline(ctx context.Context, at time.Time) bool {
	deadline, ok := ctx.Deadline()
	return ok && deadline.Before(at)
}

// waitResumeAt reads the state a --resume continues and, when it names a
// resume_at still to come, waits for it: a countdown on the renderer, and
// under --park exit with a wait beyond --max-retry-after, exit 5 at once
// without a request. It clears resume_at once it passed, and reports
// whether the state was parked and how many pages it holds.
func (j *job) waitResumeAt(ctx context.Context, rep event.Reporter, pk *parking) (parked bool, pages int, err error) {
	if !j.resume || j.out == "" {
		return false, 0, nil
	}
	path := statePath(j.out)
	st, err := loadState(path)
	if err != nil || st == nil || st.ResumeAt == "" {
		return false, 0, nil // open says what is wrong with a missing or damaged state
	}
	at, perr := time.Parse(time.RFC3339, st.ResumeAt)
	if perr != nil || time.Until(at) > maxResumeAhead {
		return false, 0, usagef("the state file %s is damaged: its resume_at %q is not an RFC 3339 time within a day; use --force to start over", path, st.ResumeAt)
	}
	if now := time.Now(); at.After(now) {
		wait := at.Sub(now)
		if pk.mode == parkExit && wait > pk.limit || pastDeadline(ctx, at) {
			event.Emit(rep, event.Event{Kind: event.Parked, Time: now, Reason: event.ParkExit, Wait: wait, Done: st.Done, Items: st.Rows, Context: ctx})
			return true, st.Done, &parkedError{at: at, cause: "the saved harvest may continue", state: path}
		}
		event.Emit(rep, event.Event{Kind: event.Waiting, Time: now, Reason: event.WaitRateLimited, Wait: wait, Host: j.origin.Host, Context: ctx})
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return true, st.Done, &interruptedError{err: fmt.Errorf("interrupted while waiting for resume_at %s: %w", rfc3339(at), context.Cause(ctx)), state: path}
		}
	}
	st.ResumeAt = ""
	if err := st.save(path); err != nil {
		return true, st.Done, err
	}
	return true, st.Done, nil
}

// expiryStatuses are the answers an API gives a cursor it no longer
// holds.
var expiryStatuses = map[int]bool{http.StatusBadRequest: true, http.StatusNotFound: true, http.StatusGone: true}

// cursorExpired handles a parked harvest whose saved page the server no
// longer serves (ADR 0332): a 400, 404 or 410 whose body names an expiry
// (410 whatever it says), on the first page of the resumed walk. A
// computed style (offset:, page:) continues from its saved point with a
// page rebuilt from the first URL, once (a second refusal ends it); any
// other style carries the server's own cursor, which nothing can rebuild,
// and the error says so.
func (j *job) cursorExpired(err error, pages int) (again bool, _ error) {
	var pe *paginate.Error
	if !errors.As(err, &pe) || pe.Page != 1 || !expiryStatuses[pe.Status] ||
		pe.Status != http.StatusGone && !strings.Contains(strings.ToLower(pe.Excerpt), "expir") {
		return false, nil
	}
	path := statePath(j.out)
	st, lerr := loadState(path)
	if lerr != nil || st == nil {
		return false, nil
	}
	what := fmt.Sprintf("the saved next page expired while the harvest was parked (the server answered %d)", pe.Status)
	fresh, ok := j.rebuiltNext(st)
	switch {
	case ok && j.rebuilt:
		return false, fmt.Errorf("%s, and again to a page rebuilt from the first URL at row %d: the harvest cannot continue; the %s received are kept in %s, start over with --force",
			what, st.Rows+1, plural(st.Rows, "row", "rows"), partialPath(j.out))
	case !ok:
		return false, fmt.Errorf("%s; the --pages %s cursor is the server's own and cannot be rebuilt, so the harvest cannot continue: the %s received are kept in %s, start over with --force",
			what, j.pages, plural(st.Rows, "row", "rows"), partialPath(j.out))
	}
	st.Next = fresh
	if serr := st.save(path); serr != nil {
		return false, serr
	}
	j.rebuilt, j.resume, j.force, j.continued = true, true, false, true
	if j.say != nil {
		fmt.Fprintf(j.say, "%s; continuing at row %d from a fresh page\n", what, st.Rows+1)
	}
	return true, nil
}

// rebuiltNext is the saved point of a computed style as a page of the
// first URL: offset:PARAM at the rows received, page:PARAM at the pages
// received, both counted from the first URL's own value.
func (j *job) rebuiltNext(st *harvestState) (string, bool) {
	name, rest, _ := strings.Cut(j.pages, ":")
	param, _, _ := strings.Cut(rest, ":")
	if param == "" || name != "offset" && name != "page" {
		return "", false
	}
	first, err := url.Parse(st.URL)
	if err != nil {
		return "", false
	}
	q := first.Query()
	var at int64
	switch name {
	case "offset":
		start, _ := strconv.ParseInt(q.Get(param), 10, 64)
		at = start + st.Rows
	case "page":
		start, err := strconv.ParseInt(q.Get(param), 10, 64)
		if err != nil {
			start = 1
		}
		at = start + int64(st.Done)
	}
	q.Set(param, strconv.FormatInt(at, 10))
	first.RawQuery = q.Encode()
	return first.String(), true
}

// jsonStatus is what --json-status writes.
type jsonStatus struct {
	Status   string `json:"status"` // complete, parked, rate_limited, interrupted, failed or usage
	ExitCode int    `json:"exit_code"`
	ResumeAt string `json:"resume_at,omitempty"`
	Output   string `json:"output,omitempty"`
	State    string `json:"state,omitempty"`
	Rows     int64  `json:"rows"`
	Pages    int    `json:"pages"`
	Message  string `json:"message,omitempty"`
}

// writeStatus writes --json-status for a harvest that ended with err,
// durably (a temporary file renamed over it), so a runner never reads
// half of one.
func (pk *parking) writeStatus(out string, res result, err error) error {
	if pk.status == "" {
		return nil
	}
	s := jsonStatus{Status: "complete", Output: out, Rows: res.rows, Pages: res.pages}
	if err != nil {
		s.ExitCode, s.Message = exitCode(err), oneLine(err)
		s.Status = map[int]string{exitFailed: "failed", exitUsage: "usage", exitInterrupted: "interrupted",
			exitRateLimited: "rate_limited", exitParked: "parked"}[s.ExitCode]
		if out != "" && s.ExitCode != exitUsage {
			s.State = statePath(out)
		}
	}
	var pe *parkedError
	if errors.As(err, &pe) {
		s.ResumeAt = rfc3339(pe.at)
	} else if out != "" && err != nil {
		if st, _ := loadState(statePath(out)); st != nil {
			s.ResumeAt = st.ResumeAt
		}
	}
	b, merr := json.MarshalIndent(s, "", "  ")
	if merr != nil {
		return merr
	}
	if werr := writeFileAtomic(pk.status, append(b, '\n')); werr != nil {
		return fmt.Errorf("writing --json-status %s: %w", pk.status, unwrapPathError(werr))
	}
	return nil
}

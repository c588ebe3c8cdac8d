package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

// job is one harvest: a walk whose items stream to an output. The demo runs
// the same job.
type job struct {
	client  *steady.Client
	origin  *url.URL // the first URL given
	pages   string   // the --pages text
	next    paginate.Next
	items   string
	total   string   // the --total field ("": the defaults)
	allow   []string // --allow-host: hosts besides the first URL's
	maxRows int
	format  string // one of the fmt constants of output_format.go
	out     string // "" means w
	w       io.Writer
	label   string // what w is called in messages ("" means stdout)
	// wrap, when set, wraps the partial file's writer: tests inject
	// failing disks with it.
	wrap   func(io.Writer) io.Writer
	resume bool
	force  bool
	csvRaw bool // --csv-raw: no escapes or formula neutralisation in cells
	// statePages and stateInterval, when set, replace the checkpoint's
	// bounds: tests make a crash's cost exact with them.
	statePages    int
	stateInterval time.Duration
	// detected, when set, is told once, after the first page, what the
	// walk found out for itself (--pages auto, --items not given).
	detected func(paginate.Detected)

	// concurrency is --concurrent: the pages a computed style fetches at
	// once.
	concurrency int
	// say, when set, is where --pages auto says what it detected.
	say io.Writer
	// stoppedAt is when the walk ended with an error: a park counts its
	// wait from it. rebuilt: a cursor that expired while parked was
	// rebuilt once (park.go).
	stoppedAt time.Time
	rebuilt   bool
	continued bool // a resume in the process that parked: its renderer counted the rows
	// headers are the -H headers; nil for none.
	headers *harvestHeaders
	// since is --since-field and --since-param; nil without them.
	since *sinceSpec
	// xmlFound says --pages auto proved an XML listing: its items are XML
	// elements.
	xmlFound bool
	// start is the URL the walk starts at: the first, or the saved next
	// page with the secrets of its path put back.
	start string
}

type result struct {
	rows     int64
	pages    int
	resumed  bool
	elapsed  time.Duration
	complete bool
}

// parsePages reads --pages as paginate.ParseStyle spells it.
func parsePages(s string) (paginate.Next, error) {
	n, err := paginate.ParseStyle(s)
	if err != nil {
		var se *paginate.StyleError
		if errors.As(err, &se) {
			return nil, usagef("--pages %q: %s", s, se.Reason)
		}
		return nil, usagef("--pages %q: %v", s, err)
	}
	return n, nil
}

// run walks the pages and writes the items. With an output file, items go to
// a partial file beside it and a state file records each finished page;
// only a complete walk renames the partial file to the output.
func (j *job) run(ctx context.Context, rep event.Reporter) (res result, err error) {
	start := time.Now()
	defer func() { res.elapsed = time.Since(start) }()
	origin := stripCredentials(j.origin, j.client.Redactor())
	st := &harvestState{Version: stateVersion, URL: origin, Pages: j.pages, Items: j.items,
		Format: j.format, MaxRows: j.maxRows, Next: origin}
	if j.since != nil {
		st.SinceField, st.SinceParam = j.since.field, j.since.param
	}

	var file *os.File
	w := j.w
	if j.out != "" {
		lock, err := lockOutput(j.out)
		if err != nil {
			return res, err
		}
		defer lock.release()
		if file, st, err = j.open(st); err != nil {
			return res, err
		}
		defer func() { _ = file.Close() }()
		w = file
		if j.wrap != nil {
			w = j.wrap(file)
		}
		res.resumed = j.resume
	}
	out := &byteCounter{w: w, n: st.Offset}
	sink := j.output(out, st)
	if cs, ok := sink.(*csvSink); ok {
		cs.raw = j.csvRaw
	}
	if j.pages == "auto" {
		sink = &autoXMLSink{sink: sink, xml: &xmlSink{sink: sink}, on: &j.xmlFound}
	}
	res.rows, res.pages = st.Rows, st.Done
	if j.resume && !j.continued {
		// Progress counts the rows and pages already in the file as done.
		event.Emit(rep, event.Event{Kind: event.Resumed, Done: st.Done, Items: st.Rows})
	}
	if j.maxRows > 0 && st.Rows >= int64(j.maxRows) {
		if err := sink.end(); err != nil {
			return res, fmt.Errorf("writing %s: %w", j.name(), err)
		}
		return res, j.finish(file, st, &res)
	}

	pt := j.pageTransport()
	// The hosts are the first URL's and --allow-host's, named even on a
	// resume, whose first request is the saved next page.
	opt := paginate.Options{Next: j.next, Items: j.items, TotalField: j.total, Reporter: rep,
		AllowedHosts: j.policy().AllowedHosts, Concurrency: j.pagesAtOnce(), ItemsBefore: st.Rows}
	if j.maxRows > 0 {
		opt.MaxRows = j.maxRows - int(st.Rows)
	}
	if j.pages == "auto" && rep != nil {
		opt.Reporter = &firstPageHold{r: rep, holding: true}
	}
	if j.start, err = unsealNext(st.Next, j.client.Redactor(), statePath(j.out)); err != nil {
		return res, err
	}
	walk, err := j.client.Walk(j.start, nil, opt)
	if err != nil {
		return res, &usageError{err: err}
	}
	cp := newCheckpoint(file, statePath(j.out), out, sink, st, time.Now())
	if j.statePages > 0 {
		cp.pages = j.statePages
	}
	if j.stateInterval > 0 {
		cp.interval = j.stateInterval
	}
	defer func() { _ = cp.wait() }() // even on a panic, so that no state is written after run returns
	writeFailed := false
	all := withRanges(&walk, j.autoPages(&walk, opt, st))
	pages := ahead(ctx, all)
	if opt.Concurrency > 1 {
		// Such a walk fetches pages while this one is written already;
		// one more held here would be a page too many.
		pages = all(ctx)
	}
	for w, werr := range pages {
		page := w.page
		if werr != nil {
			j.stoppedAt = time.Now()
			// The failed page's own record says why retrying stopped,
			// whichever pages were in flight beside it.
			sum := walk.Summary()
			err = rateLimited(inFlagWords(werr), pt.outcome(sum.Next, sum.NextRange))
			var pe *paginate.Error
			if errors.As(werr, &pe) && errors.Is(pe, paginate.ErrCrossHost) {
				err = fmt.Errorf("%w; --allow-host %s follows it, if that host is trusted", err, pe.Host)
			}
			break
		}
		if page.Number == 1 && j.detected != nil {
			j.detected(walk.Summary().Detected)
		}
		// A page counts only once it is written: until then the state on
		// disk still names it, so a failed write (a CSV item that is not
		// an object, a full disk, a file-size limit) is fetched again on
		// resume rather than skipped. Without a file, each page goes out
		// at once, for whoever reads the stream; a file is written in
		// large blocks, and flushed when a state is due.
		var items rows
		if items, err = j.since.check(st, page.Items); err != nil {
			break
		}
		if err = sink.writePage(st.Done+1, items); err == nil && file == nil {
			err = sink.flush()
		}
		if err != nil {
			err = fmt.Errorf("writing %s: %w", j.name(), err)
			writeFailed = true
			break
		}
		st.Done++
		st.Rows += int64(items.Len())
		if page.Number == 1 {
			if t := walk.Summary().Total; t > 0 {
				st.Total = t // kept for a resume, whose first page may not say
			}
		}
		st.Columns = sink.columns()
		res.rows, res.pages = st.Rows, st.Done
		if page.Next == nil {
			// The last page, or one whose next link the walk is about to
			// refuse: there is no page to resume from, and the state must
			// not point back at this one, whose rows are written.
			st.Next, st.NextRange = "", ""
			continue
		}
		st.Next, st.NextRange = keyFree(page.Next, j.client.Redactor()), w.nextRange
		if err = cp.pageDone(st, time.Now()); err != nil {
			writeFailed = true
			break
		}
	}
	var rowsEnd int64 // where the rows end, before what end writes after them
	if err == nil && j.since != nil {
		var b int
		b, err = sink.buffered()
		rowsEnd = out.n + int64(b)
	}
	if err == nil {
		if err = sink.end(); err != nil {
			err = fmt.Errorf("writing %s: %w", j.name(), err)
			writeFailed = true
		}
	}
	if err != nil {
		if writeFailed || st.Next != "" {
			// Every page whose bytes all reached the file is kept and
			// recorded, and st is set back to the last of them; anything
			// after it is cut off. If recording fails too, the state on
			// disk stays a resume point, only an earlier one.
			_ = cp.flush(st, time.Now())
		} else {
			_ = sink.flush()
			_ = cp.wait() // interrupted removes the state: none may be in flight
		}
		res.rows, res.pages = st.Rows, st.Done
		return res, j.interrupted(err, st)
	}
	// Every page is written; a state that failed in the background after
	// the last one no longer matters, and finish fsyncs the file itself.
	_ = cp.wait()
	if err := j.short(walk.Summary(), st, file); err != nil {
		return res, err
	}
	if err := j.finish(file, st, &res); err != nil {
		return res, err
	}
	return res, j.saveSince(st, rowsEnd)
}

// ahead runs a walk one page ahead of the loop that writes its items: the
// next page is fetched while this one is written and made durable, so a
// harvest takes about the longer of the two, not their sum, and holds at
// most two pages. A page larger than bigPage is written before the next is
// fetched (ADR 0347): two of those, with the growth of the buffer the
// next one arrives in, would hold several times the page limit, and such
// a page takes long enough to arrive that the overlap saves little.
// Breaking out of the loop (or a panic in it) stops the
// walk and waits for it, so nothing is left running; a page fetched ahead
// and not written is not counted anywhere, and a resume fetches it again.
func ahead(ctx context.Context, all func(context.Context) iter.Seq2[walked, error]) iter.Seq2[walked, error] {
	return func(yield func(walked, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		type step struct {
			page walked
			err  error
		}
		steps := make(chan step)
		written := make(chan struct{}) // a big page was written
		stop := make(chan struct{})    // closed when the loop stops early
		go func() {
			defer close(steps)
			for p, err := range all(ctx) {
				select {
				case steps <- step{p, err}: // the walk's own end, ctx's error included, always arrives
				case <-stop:
					return
				}
				if bigWalked(p) {
					select {
					case <-written:
					case <-stop:
						return
					}
					// Its memory goes back now, not at the collector's
					// next goal, which a page this size sets at twice its
					// size past the next.
					debug.FreeOSMemory()
				}
			}
		}()
		defer func() {
			close(stop)
			cancel()
			for range steps {
			}
		}()
		for s := range steps {
			if !yield(s.page, s.err) {
				return
			}
			if bigWalked(s.page) {
				written <- struct{}{}
			}
		}
	}
}

// bigPage is the body size past which ahead fetches no page while one is
// written.
const bigPage = 8 << 20

func bigWalked(w walked) bool { return w.page != nil && len(w.page.Body) > bigPage }

// short fails a walk that ended with fewer rows than the server announced
// (ADR 143): a wrong --pages or --items, or a server that stopped early,
// must not pass as a whole harvest; and one that ended with more (ADR
// 308), which a walk that repeated pages gives. The rows stay where they were written;
// a file keeps its .partial name, and its state goes, since the walk has
// no page left to resume from.
func (j *job) short(sum paginate.Summary, st *harvestState, file *os.File) error {
	if sum.Total > 0 {
		st.Total = sum.Total
	}
	want := st.Total
	if j.maxRows > 0 {
		want = min(want, int64(j.maxRows))
	}
	// An incremental run's total counts its own rows, those it skipped as
	// sent again included.
	got := st.Rows - st.RowsBefore + st.SinceSkipped
	if got == want || got > want && st.Total == 0 {
		return nil
	}
	where := "were written to " + j.name()
	if file != nil {
		if err := file.Sync(); err != nil {
			return fmt.Errorf("writing %s: %w", j.name(), err)
		}
		_ = os.Remove(statePath(j.out))
		where = "are kept in " + partialPath(j.out)
	}
	if got > want {
		return fmt.Errorf("the server announced %d rows, but the walk received %d: pages repeated or overlapped, or the collection grew during the walk; the %d rows %s",
			st.Total, got, st.Rows, where)
	}
	return fmt.Errorf("the server announced %d rows, but the walk ended after %d: the pages may be linked another way (--pages, --items) or the server stopped early; the %d rows %s",
		st.Total, got, st.Rows, where)
}

// open prepares the partial file: a new one, or, with --resume, the old one
// cut back to the last whole page.
func (j *job) open(fresh *harvestState) (*os.File, *harvestState, error) {
	partial, state := partialPath(j.out), statePath(j.out)
	old, err := loadState(state)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case j.resume && old == nil:
		return nil, nil, usagef("nothing to resume: %s does not exist", state)
	case j.resume:
		if what := stateDiffers(old, fresh, j.client.Redactor()); what != "" {
			return nil, nil, usagef("cannot resume: the saved harvest in %s was made with %s; repeat its command line, or start over with --force", state, what)
		}
		// The state is a file anyone with access to the directory could
		// edit: its next page must be one a link could have led to.
		next, err := url.Parse(old.Next)
		if err != nil || j.policy().Check(next, j.origin) != nil {
			return nil, nil, usagef("the state file %s names a next page off the harvest's hosts; it is damaged or was edited, use --force to start over", state)
		}
		if err := j.checkFile(); err != nil {
			return nil, nil, err
		}
		f, err := openPrivate(partial, false)
		if err != nil {
			return nil, nil, usagef("cannot resume: %v", unwrapPathError(err))
		}
		if fi, err := f.Stat(); err != nil || fi.Size() < old.Offset {
			_ = f.Close()
			size := int64(-1)
			if fi != nil {
				size = fi.Size()
			}
			return nil, nil, usagef("cannot resume: %s holds %d bytes, shorter than the %d bytes of whole pages %s records; rows were lost from it (a crash that lost data, or an edit), so start over with --force", partial, size, old.Offset, state)
		}
		// Bytes past the offset are a page the state does not count (a
		// kill between its write and the state's): they are fetched again.
		if err := f.Truncate(old.Offset); err != nil {
			_ = f.Close()
			return nil, nil, err
		}
		if _, err := f.Seek(old.Offset, io.SeekStart); err != nil {
			_ = f.Close()
			return nil, nil, err
		}
		return f, old, nil
	case old != nil && !j.force:
		// A rerun continues the interrupted harvest, as a rerun of get
		// continues its download (ADR 0337); --force starts over.
		j.resume = true
		return j.open(fresh)
	case j.since != nil && j.force:
		_ = os.Remove(sincePath(j.out)) // started over: the record is this run's to write
	case j.since != nil:
		rec, err := loadSince(j.out)
		if err != nil {
			return nil, nil, err
		}
		if rec != nil && rec.State.SinceMax == "" {
			// The last run wrote no row with the field: there is no
			// value to ask after, and this run harvests everything
			// again, replacing the output rather than appending to it.
			j.force = true
		} else if rec != nil {
			return j.continueSince(rec, fresh)
		}
	}
	if err := j.checkFile(); err != nil {
		return nil, nil, err
	}
	f, err := openPrivate(partial, true)
	if err != nil {
		return nil, nil, usagef("cannot write the output %s: %v", partial, unwrapPathError(err))
	}
	if err := fresh.save(state); err != nil {
		_ = f.Close()
		_ = os.Remove(partial)
		return nil, nil, usagef("cannot write the output %s: %v", state, unwrapPathError(err))
	}
	return f, fresh, nil
}

// policy is the next-link policy of the harvest: its first URL's host and
// the --allow-host ones.
func (j *job) policy() paginate.Policy {
	return paginate.Policy{AllowedHosts: append([]string{j.origin.Host}, j.allow...)}
}

// checkFile makes sure the output is a regular file (or none yet): the
// partial file and the state live beside it, and only it can be replaced by
// a rename at the end.
func (j *job) checkFile() error {
	kind, err := checkOutput(j.out, j.force)
	if err == nil && kind != destFile {
		err = usagef("the output %s is not a regular file: a harvest into it cannot keep a partial file and a state beside it", j.out)
	}
	return err
}

// finish renames the partial file to the output: the walk is complete.
func (j *job) finish(file *os.File, st *harvestState, res *result) error {
	res.complete = true
	if file == nil {
		return nil
	}
	if err := file.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", j.name(), err)
	}
	if j.format == fmtParquet {
		return j.publishBuilt(file)
	}
	if err := publishMode(file, j.out); err != nil {
		return fmt.Errorf("writing %s: %w", j.out, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", j.name(), err)
	}
	if err := replaceWith(partialPath(j.out), j.out); err != nil {
		return err
	}
	return j.dropState()
}

// dropState removes the state of a published harvest.
func (j *job) dropState() error {
	// A state left beside a finished output would make the next harvest
	// into it refuse to start, so failing to remove it is said.
	if err := os.Remove(statePath(j.out)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is complete, but its state could not be removed (remove it before harvesting into %s again): %w", j.out, j.out, err)
	}
	return nil
}

// interrupted explains a walk that ended early. Every whole page is already
// in the partial file and the state says where to continue, so nothing
// fetched is lost whatever the cause.
func (j *job) interrupted(err error, st *harvestState) error {
	if j.out == "" {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("interrupted after %d rows written to %s (without -o a harvest cannot be resumed): %w", st.Rows, j.name(), err)
		}
		return err
	}
	// The state on disk is the resume point: the first page not durably
	// written. Nothing here moves it.
	if st.Next == "" {
		// Nothing to resume from (a refused next link): keep the rows, drop
		// the state, so no resume can fetch a written page again.
		_ = os.Remove(statePath(j.out))
		return fmt.Errorf("%w (the %s received are kept in %s; the walk cannot be resumed past this link)",
			err, plural(st.Rows, "row", "rows"), partialPath(j.out))
	}
	if transient(err) {
		return &interruptedError{err: err, state: statePath(j.out)}
	}
	return fmt.Errorf("%w (the %s received are kept in %s; --resume continues after the cause is fixed)",
		err, plural(st.Rows, "row", "rows"), partialPath(j.out))
}

// rateLimitedError is a walk stopped by a rate limit that steady would not
// wait out: it exits 4, as get's [*steady.RateLimitError] does.
type rateLimitedError struct {
	err  error
	wait time.Duration // the server's hint, 0 when it gave none
}

func (e *rateLimitedError) Error() string {
	if e.wait > 0 {
		return fmt.Sprintf("%v; the server asked to wait %v, longer than steady waits", e.err, e.wait.Round(time.Second))
	}
	return e.err.Error()
}
func (e *rateLimitedError) Unwrap() error { return e.err }

// rateLimited marks err as a rate limit when the page failed with a final
// 429, or retrying stopped because the wait asked for (Retry-After, or a
// quota's reset) is past the cap.
func rateLimited(err error, out *retry.Outcome) error {
	var pe *paginate.Error
	is429 := errors.As(err, &pe) && pe.Status == 429
	if is429 || errors.Is(out.Stop, retry.ErrRetryAfter) || errors.Is(out.Stop, retry.ErrRateLimited) {
		return &rateLimitedError{err: err, wait: out.RetryAfter}
	}
	return err
}

// transient reports whether trying later might get further: the user
// stopped the run, a rate limit steady would not wait out, or what
// [retry.Transient] calls transient (retrying ran out, a retryable status).
func transient(err error) bool {
	var pe *paginate.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, new(*rateLimitedError)):
		return true
	case errors.As(err, &pe) && errors.Is(pe, paginate.ErrStatus):
		// The retry layer below already gave up on this status; a later
		// run may fare better if it is one that passes with time.
		return retry.TransientStatus(pe.Status) || retry.Transient(err)
	}
	return retry.Transient(err)
}

func (j *job) name() string {
	switch {
	case j.out != "":
		return j.out
	case j.label != "":
		return j.label
	}
	return "stdout"
}

func newHarvest(g *globals) *cobra.Command {
	var (
		pages, items, out, format, total string
		allow, headers                   []string
		sinceField, sinceParam           string
		maxRows                          int
		resume, force, csvRaw, flatten   bool
		sharedQuota                      string
		pk                               parking
	)
	cmd := &cobra.Command{
		Use:   "harvest URL",
		Short: "Walk every page of a paginated JSON API into a JSONL or CSV file",
		Long: `harvest follows next-page links from URL and streams every item to the
output as it arrives; memory stays flat however large the collection.

Pages are linked by an RFC 8288 Link header (--pages link), by OGC API /
STAC JSON links (--pages json-links), by a cursor field in the body sent
back as a query parameter (--pages cursor:FIELD:PARAM), by a next URL in
the body (body-link:FIELD), or computed: offset:PARAM[:LIMITPARAM],
page:PARAM[:SIZEPARAM], range[:SIZE] (PostgREST's Range header), and S3's
XML continuation tokens (xml:TOKENPATH:PARAM[:ITEMSPATH], each element
written as a JSON object of its children). Computed styles fetch
--concurrent pages at once and write them in order. The default, --pages
auto, walks a Link header or JSON links, and otherwise proves the style
from the first page and says the flags it settled on; when nothing proves
it, or that the first page is the only one, it fails (exit 1).
--items names where the items are in each page (a dotted path such as data
or result.items; "" for a top-level array); by default they are found on the
first page: the page itself when it is an array, else the first array among
features, items, data and results. What was detected is said once on stderr.
Next links to another host (unless --allow-host names it), to plain http
from https, or seen before end the walk with an error.

With -o the output appears only when the walk is complete: items go to
FILE.partial and FILE.state.json records each finished page. After an
interruption (exit 3) or any failure, the same command run again (or with
--resume) continues from the last page received, without duplicating or
losing a row; --force starts over.
One run at a time writes FILE (a lock on FILE.lock; a second run exits 2),
and a partial or state owned by another user is refused.
A walk that ends with fewer or more rows than the first page announced
(X-Total-Count, numberMatched, or the field --total names) fails with both
numbers; the rows stay in FILE.partial.
The -o extension picks the format: .jsonl, .json (one JSON array),
.jsonl.gz, .jsonl.zst, .csv or .parquet; each resumes as JSONL does. A
Parquet file is built from all the rows once the walk is complete, each
top-level field an optional column whose type widens as rows differ.
-H headers go to the URL's origin only (Accept, Accept-Encoding,
Accept-Language, Cache-Control, If-Modified-Since, If-None-Match and
User-Agent everywhere), never to next links or redirects elsewhere.
--since-field F --since-param P harvests incrementally: a complete run
records the highest F beside the output (FILE.since.json); the next run
asks for P=that value, appends the new rows to FILE, skips the rows at
the value it already wrote, and fails (exit 1), leaving FILE as it was,
on a row older than the value. Values compare as numbers when both are
numbers, as RFC 3339 times when both are, else as text.
CSV columns are the union of the keys of the first rows' items, in the
order first seen; fields first seen later go, as a JSON object, to a last
column, _extra, which a file has only once a row needs it. --flatten
writes nested objects as dotted columns (a GeoJSON geometry stays JSON
text). Control characters in CSV cells are escaped (\x1b), and a
text cell starting with =, +, -, @, tab or CR gets a leading ', so that a
spreadsheet shows it rather than runs it as a formula; --csv-raw writes the
cells as the server sent them. Without -o, or with -o -, items are written to stdout as
JSONL; a FIFO or device (/dev/null) is written into, never replaced, with no
resume; a symbolic link as the output is refused.`,
		Example: `  steady harvest https://api.example.gov/v1/items -o items.jsonl
  steady harvest https://api.example.gov/collections/x/items --items features -o x.csv
  steady harvest http://127.0.0.1:8080/items --allow-host 127.0.0.1:9090 -o rows.jsonl
  steady harvest https://api.example.gov/v1/events --pages cursor:next_cursor:cursor --items data --max-rows 5000
  steady harvest https://api.example.gov/v1/items -o items.jsonl --resume`,
		Args: exactlyOneURL,
		RunE: func(cmd *cobra.Command, args []string) (runErr error) {
			target, err := parseTarget(args[0])
			if err != nil {
				return err
			}
			next, err := parsePages(pages)
			if err != nil {
				return err
			}
			if maxRows < 0 {
				return usagef("--max-rows %d: want 0 (no cap) or more", maxRows)
			}
			if resume && out == "" {
				return usagef("--resume needs the -o file of the interrupted harvest")
			}
			fmtName, err := formatOf(out, format, flatten)
			if err != nil {
				return err
			}
			since, err := parseSince(sinceField, sinceParam)
			if err != nil {
				return err
			}
			if err := since.checkFormat(fmtName, out); err != nil {
				return err
			}
			if fmtName == fmtParquet && out == "" {
				return usagef("Parquet output needs -o naming a regular file: the file is built once the walk is complete, not streamed")
			}
			if !cmd.Flags().Changed("items") {
				items = paginate.FindItems
				if isXMLStyle(next) {
					items = "" // an XML walk finds its items by the style's path
				}
			} else if err := checkItemsPath(items); err != nil {
				return err
			}
			hosts, err := allowedHosts(allow)
			if err != nil {
				return err
			}
			// A regular file gets a partial file and a state; standard
			// output and special files are streamed into, with no resume.
			w, file, label := cmd.OutOrStdout(), out, ""
			if out != "" {
				// An incremental run continues the output its record
				// describes: that it exists is no reason to refuse.
				_, recErr := os.Lstat(sincePath(out))
				kind, err := checkOutput(out, force || since != nil && recErr == nil)
				if err != nil {
					return err
				}
				switch {
				case kind != destFile && resume:
					return usagef("--resume needs the regular -o file of the interrupted harvest, not %s", out)
				case kind != destFile && fmtName == fmtParquet:
					return usagef("Parquet output needs -o naming a regular file: the file is built once the walk is complete, not streamed")
				case kind == destStdout:
					file = ""
				case kind == destSpecial:
					f, err := openSpecial(cmd.Context(), out)
					if err != nil {
						return err
					}
					defer func() {
						if cerr := f.Close(); runErr == nil && cerr != nil {
							runErr = fmt.Errorf("writing %s: %w", out, cerr)
						}
					}()
					w, file, label = f, "", out
				}
			}
			if err := pk.check(file); err != nil {
				return err
			}
			if g.shared, err = openShared(cmd, sharedQuota, g.stderr); err != nil {
				return err
			}
			defer g.shared.Close()
			hh, err := g.parseHarvestHeaders(headers, target)
			if err != nil {
				return err
			}
			client, r, err := g.clientFor(target, retry.Policy{RetryStatus: retry.AnyServerError}, hh.keys...)
			if err != nil {
				return err
			}
			defer client.CloseIdleConnections()
			j := &job{client: client, origin: target, pages: pages, next: next, items: items, total: total, allow: hosts,
				maxRows: maxRows, format: fmtName, out: file, w: w, label: label, resume: resume, force: force, csvRaw: csvRaw,
				headers: hh, since: since}
			s, _ := g.settings() // clientFor read them: no error here
			j.concurrency = s.Concurrent
			// The command's own lines go through the renderer, which
			// prints them above its bars.
			say := render.Lines(r, g.stderr)
			if !g.quiet && (pages == "auto" || items == paginate.FindItems) {
				j.detected = func(d paginate.Detected) { fmt.Fprintln(say, detectedLine(d, pages, items)) }
			}
			if !g.quiet {
				j.say = say
			}
			pk.limit = s.MaxRetryAfter
			if n := j.procs(); n > 0 && setProcs != nil {
				setProcs(n)
			}
			res, err := j.runParked(cmd.Context(), r, &pk)
			r.Close()
			if serr := pk.writeStatus(file, res, err); serr != nil && err == nil {
				err = serr
			}
			if err == nil && file != "" && !g.quiet {
				fmt.Fprintf(g.stderr, "harvested %s in %s into %s (%s)\n", plural(res.rows, "row", "rows"), plural(res.pages, "page", "pages"), out, res.elapsed.Round(time.Millisecond))
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&pages, "pages", "auto", "how pages are linked: auto, link, json-links, cursor:FIELD:PARAM, body-link:FIELD, offset:PARAM[:LIMITPARAM], page:PARAM[:SIZEPARAM], range[:SIZE] or xml:TOKENPATH:PARAM[:ITEMSPATH]")
	f.StringVar(&items, "items", "", `where the items are in a page, a dotted path ("" for a top-level array; default: found on the first page)`)
	f.StringVarP(&out, "output", "o", "", "output file, .jsonl, .json, .jsonl.gz, .jsonl.zst, .csv or .parquet (default: JSONL on stdout)")
	f.StringVar(&total, "total", "", "where the first page says how many items there are, a dotted path such as meta.total (default: the X-Total-Count header, or numberMatched)")
	f.StringArrayVar(&allow, "allow-host", nil, "a host (host or host:port) that next links and redirects may lead to besides the URL's own (repeatable); the API key is never sent there")
	f.StringVar(&format, "format", "", "output format, jsonl, json, jsonl.gz, jsonl.zst, csv or parquet (default: from the file's extension)")
	f.BoolVar(&flatten, "flatten", false, "CSV: nested objects as dotted columns (a GeoJSON geometry stays JSON text)")
	f.IntVar(&maxRows, "max-rows", 0, "stop after exactly this many rows (0: all)")
	f.StringArrayVarP(&headers, "header", "H", nil, "request header 'Name: value' (repeatable), sent to the URL's origin only unless it is Accept, Accept-Encoding, Accept-Language, Cache-Control, If-Modified-Since, If-None-Match or User-Agent")
	f.StringVar(&sinceField, "since-field", "", "incremental harvest: the field (a dotted path) whose highest value is recorded beside -o; the next run asks for rows after it and appends them")
	f.StringVar(&sinceParam, "since-param", "", "incremental harvest: the query parameter that asks for rows after --since-field's recorded value")
	f.BoolVar(&resume, "resume", false, "continue the interrupted harvest into the -o file")
	f.BoolVar(&force, "force", false, "replace an existing output, or start an interrupted harvest over")
	f.BoolVar(&csvRaw, "csv-raw", false, "write CSV cells exactly as the server sent them: no escaping of control characters, no ' before a leading =, +, -, @, tab or CR")
	completeValues(cmd, "pages", pagesChoices...)
	completeValues(cmd, "format", "jsonl\tone JSON value a line", "json\tone JSON array", "jsonl.gz\tgzip JSONL", "jsonl.zst\tzstd JSONL", "csv\tcomma-separated, a header of the first page's keys", "parquet\tParquet, built once the walk is complete")
	addSharedQuotaFlag(cmd, &sharedQuota)
	addParkFlags(cmd, &pk)
	addReserveFlag(cmd, g)
	return cmd
}

// inFlagWords restates a walk error's advice with the flag that takes it.
func inFlagWords(err error) error {
	var pe *paginate.Error
	if errors.As(err, &pe) && errors.Is(pe.Err, paginate.ErrNoItems) && pe.Hint != "" {
		pe.Hint = "use --items to say where the items are"
	}
	return err
}

// checkItemsPath refuses an --items path the walk could not follow.
func checkItemsPath(items string) error {
	if items == "" {
		return nil
	}
	for _, seg := range strings.Split(items, ".") {
		if seg == "" {
			return usagef("--items %q: a key of the path is empty; want a dotted path such as data or result.items, or \"\" for a top-level array", items)
		}
	}
	return nil
}

// allowedHosts checks --allow-host values: a host or host:port, nothing
// else, so a URL pasted by mistake does not allow more or less than meant.
func allowedHosts(list []string) ([]string, error) {
	var hosts []string
	for _, h := range list {
		u, err := url.Parse("http://" + h)
		if h == "" || err != nil || u.Host != h || u.User != nil || u.Hostname() == "" || strings.ContainsAny(h, "/?#@ ") {
			return nil, usagef("--allow-host %q: want a host or host:port, such as api.example.gov or 127.0.0.1:9090", h)
		}
		hosts = append(hosts, strings.ToLower(h))
	}
	return hosts, nil
}

// detectedLine says what the walk found out for itself, with the flags
// that would make it explicit:
//
//	detected: pages linked by the Link header (--pages link), items at features (--items features)
func detectedLine(d paginate.Detected, pages, items string) string {
	var parts []string
	if pages == "auto" {
		switch d.Next {
		case "link":
			parts = append(parts, "pages linked by the Link header (--pages link)")
		case "json-links":
			parts = append(parts, `pages linked by the body's "links" (--pages json-links)`)
		default:
			parts = append(parts, "a single page (no next link)")
		}
	}
	if items == paginate.FindItems && d.ItemsFound {
		if d.Items == "" {
			parts = append(parts, `items: the top-level array (--items "")`)
		} else {
			parts = append(parts, "items at "+d.Items+" (--items "+d.Items+")")
		}
	}
	return "detected: " + strings.Join(parts, ", ")
}

// stateDiffers names the first option of a saved harvest that differs from
// the one asked for, as the user would type it; "" when none does.
func stateDiffers(old, fresh *harvestState, r *credentials.Redactor) string {
	shown := func(flag, v string) string {
		if v == paginate.FindItems {
			return "no " + flag
		}
		return flag + " " + strconv.Quote(v)
	}
	switch {
	case old.URL != fresh.URL:
		return "another URL, " + r.URLString(old.URL)
	case old.Pages != fresh.Pages:
		return shown("--pages", old.Pages) + ", not " + shown("--pages", fresh.Pages)
	case old.Items != fresh.Items:
		return shown("--items", old.Items) + ", not " + shown("--items", fresh.Items)
	case old.Format != fresh.Format:
		return "--format " + old.Format + ", not --format " + fresh.Format
	case old.MaxRows != fresh.MaxRows:
		return fmt.Sprintf("--max-rows %d, not --max-rows %d", old.MaxRows, fresh.MaxRows)
	case old.SinceField != fresh.SinceField || old.SinceParam != fresh.SinceParam:
		return fmt.Sprintf("--since-field %q --since-param %q", old.SinceField, old.SinceParam)
	}
	return ""
}

// plural returns "1 row" or "2 rows".
func plural[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(int64(n), 10) + " " + many
}

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/resume"
)

// A download to a regular file (ADR 153) is written to FILE.partial, with
// FILE.partial.json beside it recording the URL and the validator of the
// answer being written. A run that finds both continues from the partial's
// length with a Range request guarded by If-Range, and the file appears
// under its name only when complete (and, with --sha256, verified).

// partialRecord is FILE.partial.json.
type partialRecord struct {
	Version      int    `json:"version"`
	URL          string `json:"url"` // credential-shaped parameters removed
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	Length       int64  `json:"length"` // -1: unknown
	// Unguarded says why the first answer offers no validator (a weak
	// ETag, none at all), so the next run can say so.
	Unguarded string `json:"unguarded,omitempty"`
}

const partialVersion = 1

func recordPath(out string) string { return partialPath(out) + ".json" }

// validator is the If-Range value the record allows, "" when none.
func (r *partialRecord) validator() string {
	if r.ETag != "" {
		return r.ETag
	}
	return r.LastModified
}

// download is one run of get -o FILE.
type download struct {
	out    string // the destination
	target *url.URL
	resume bool   // --resume: a partial must exist
	force  bool   // --force: a partial is not continued but replaced
	sum    []byte // --sha256, nil when not asked
	stderr io.Writer
	client *steady.Client
	bar    render.Download

	// got and digest are the published file's length and SHA-256, for the
	// final line.
	got    int64
	digest []byte
}

// loadPartial returns the record and the partial's length, or nil when
// there is nothing to continue.
func (d *download) loadPartial() (*partialRecord, int64, error) {
	part, rec := partialPath(d.out), recordPath(d.out)
	pst, perr := os.Lstat(part)
	data, rerr := readPrivate(rec)
	switch {
	case errors.Is(perr, fs.ErrNotExist) && (rerr == nil || errors.Is(rerr, fs.ErrNotExist)):
		if d.resume {
			return nil, 0, usagef("--resume: there is no partial download %s to continue", part)
		}
		return nil, 0, nil // a record without its partial: the run died before the first byte
	case perr != nil:
		return nil, 0, usagef("cannot use %s: %v", part, unwrapPathError(perr))
	case !pst.Mode().IsRegular():
		return nil, 0, usagef("%s is a %s, not a file steady made; remove it, or choose another output", part, describe(pst.Mode()))
	case checkPrivate(part, pst) != nil:
		return nil, 0, checkPrivate(part, pst)
	case errors.Is(rerr, fs.ErrNotExist):
		return nil, 0, usagef("%s exists without its record %s, so nothing proves what it holds; remove it, or choose another output", part, rec)
	case rerr != nil:
		return nil, 0, rerr
	}
	var r partialRecord
	if err := json.Unmarshal(data, &r); err != nil || r.Version != partialVersion {
		return nil, 0, usagef("%s is not a record steady wrote; remove it and %s", rec, part)
	}
	if r.URL != stripCredentials(d.target, d.client.Redactor()) {
		return nil, 0, usagef("%s holds a download of %s, not of this URL; remove it, or choose another output",
			part, d.client.Redactor().URLString(r.URL))
	}
	size := pst.Size()
	if r.Length >= 0 && size > r.Length {
		return nil, 0, usagef("%s is %d bytes, longer than the %d-byte body it was part of; remove it", part, size, r.Length)
	}
	return &r, size, nil
}

// run downloads to d.out.
func (d *download) run(req *http.Request) error {
	lock, err := lockOutput(d.out)
	if err != nil {
		return err
	}
	defer lock.release()
	var rec *partialRecord
	var have int64
	part := partialPath(d.out)
	if d.force {
		// --force starts over: a partial of ours is replaced, one another
		// user owns or can write is still refused.
		if st, err := os.Lstat(part); err == nil && st.Mode().IsRegular() {
			if err := checkPrivate(part, st); err != nil {
				return err
			}
		}
	} else if rec, have, err = d.loadPartial(); err != nil {
		return err
	}
	if rec == nil {
		if err := probeDir(d.out); err != nil {
			return err
		}
	}
	if rec != nil && rec.validator() == "" {
		why := rec.Unguarded
		if why == "" {
			why = "its first answer had no strong ETag or Last-Modified"
		}
		fmt.Fprintf(d.stderr, "steady: %s cannot be continued: %s, so nothing proves the server still has the same body; downloading again from byte 0\n", part, why)
		rec, have = nil, 0
	}
	// From 16 bytes before the partial's end, as within a run: the overlap
	// must match, and a partial that holds the whole body is then answered
	// 206, not 416.
	from := max(have-seamBytes, 0)
	if rec != nil && have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(from, 10)+"-")
		req.Header.Set("If-Range", rec.validator())
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return withServerMessage(err)
	}
	defer resp.Body.Close()

	var f *os.File
	switch {
	case rec != nil && have > 0 && resp.StatusCode == http.StatusPartialContent:
		total, err := checkContinuation(resp, rec, from)
		if err != nil {
			return fmt.Errorf("refusing to continue %s: %w; it is kept as it is", part, err)
		}
		if f, err = openPrivate(part, false); err != nil {
			return err
		}
		if err := d.skipOverlap(f, resp.Body, from, have); err != nil {
			_ = f.Close()
			return err
		}
		if rec.Length < 0 {
			// The first answer had no length; the range's total is the
			// body's from now on, for this run and the next.
			rec.Length = total
			data, _ := json.Marshal(rec)
			if err := writeFileAtomic(recordPath(d.out), data); err != nil {
				_ = f.Close()
				return fmt.Errorf("writing %s: %w", recordPath(d.out), err)
			}
		}
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPartialContent && rec == nil:
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("the server answered %d to a request without Range", resp.StatusCode)
		}
		if rec != nil && have > 0 {
			if d.resume {
				return usagef("--resume: the server answered the Range request with the whole body (it changed since %s was written, or ignores Range), so the partial cannot be continued; it is kept as it is; --force downloads it again from byte 0", part)
			}
			fmt.Fprintf(d.stderr, "steady: the server sent the whole body (it changed since %s was written, or ignores Range); starting again from byte 0\n", part)
		}
		have = 0
		rec = &partialRecord{Version: partialVersion, URL: stripCredentials(d.target, d.client.Redactor()), Length: resp.ContentLength,
			ETag: strongOnly(resp.Header.Get("Etag")), LastModified: strongDate(resp.Header)}
		if rec.validator() == "" {
			rec.Unguarded = unguarded(resp.Header)
		}
		if rec.Length < 0 {
			rec.Length = -1
		}
		// The record first, so a partial never exists without the proof
		// of what it holds.
		data, _ := json.Marshal(rec)
		if err := writeFileAtomic(recordPath(d.out), data); err != nil {
			return fmt.Errorf("writing %s: %w", recordPath(d.out), err)
		}
		if f, err = openPrivate(part, true); err != nil {
			return err
		}
	default:
		return fmt.Errorf("the server answered %s to a GET; nothing written", resp.Status)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(have, io.SeekStart); err != nil {
		return fmt.Errorf("writing %s: %w", part, err)
	}

	// The hash is always taken: --sha256 checks it, the final line shows it.
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, have)); err != nil {
		return fmt.Errorf("reading %s to hash it: %w", part, err)
	}
	d.bar.Begin(have, rec.Length)
	w := &countingWriter{f: f, h: h, bar: d.bar}
	buf := make([]byte, 256<<10)
	var body io.Reader = resp.Body
	if rec.Length >= 0 {
		body = io.LimitReader(resp.Body, rec.Length-have+1) // one byte past the end shows a body too long
	}
	n, err := io.CopyBuffer(w, body, buf)
	if err != nil {
		if w.werr != nil {
			return fmt.Errorf("writing %s: %w", part, w.werr)
		}
		if req.Context().Err() != nil {
			err = errors.New("interrupted")
		}
		red := d.client.Redactor()
		err = fmt.Errorf("reading the body of %s stopped at byte %d: %w", red.URL(d.target), have+n, red.Error(err))
		if why := cannotContinue(rec, err); why != "" {
			// No rerun can continue this partial: say so, and what does work.
			return fmt.Errorf("%w; %s is kept, but cannot be continued (%s): run the same command again, or with --force, to download it from byte 0", err, part, why)
		}
		return &interruptedError{err: err, state: part}
	}
	got := have + n
	if rec.Length >= 0 && got > rec.Length {
		_ = f.Truncate(have)
		return fmt.Errorf("refusing the rest of %s: the server sent more than the %d bytes it announced; the partial is kept as it was", part, rec.Length)
	}
	if rec.Length >= 0 && got != rec.Length {
		return &interruptedError{err: fmt.Errorf("the body ended at byte %d of %d", got, rec.Length), state: part}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", part, err)
	}
	d.digest = h.Sum(nil)
	if d.sum != nil && string(d.digest) != string(d.sum) {
		return fmt.Errorf("sha256 of the download is %s, not the %s asked for; nothing was removed: the bytes are in %s",
			hex.EncodeToString(d.digest), hex.EncodeToString(d.sum), part)
	}
	if err := publishMode(f, d.out); err != nil {
		return fmt.Errorf("writing %s: %w", d.out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", part, err)
	}
	if err := replaceWith(part, d.out); err != nil {
		return err
	}
	_ = os.Remove(recordPath(d.out)) // a record without its partial is ignored
	d.got = got
	return verifyPublished(d.out, got, d.sum)
}

// verifyPublished checks the file now under the output's name: its length,
// and with --sha256 its hash. What was hashed is the stream; what counts
// is the file another program (or a run that ignored the lock) may have
// put there instead.
func verifyPublished(out string, length int64, sum []byte) error {
	f, err := os.OpenFile(out, os.O_RDONLY|noFollow|noCTTY, 0)
	if err != nil {
		return fmt.Errorf("checking the published %s: %w", out, unwrapPathError(err))
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("checking the published %s: %w", out, err)
	}
	if st.Size() != length {
		return fmt.Errorf("the published %s is %d bytes, not the %d received: another program changed it during the run; do not use it", out, st.Size(), length)
	}
	if sum == nil {
		return nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("checking the published %s: %w", out, err)
	}
	if got := h.Sum(nil); string(got) != string(sum) {
		return fmt.Errorf("the published %s has sha256 %s, not the %s asked for: another program changed it during the run; do not use it", out, hex.EncodeToString(got), hex.EncodeToString(sum))
	}
	return nil
}

// probeDir fails at once, naming the output, when its directory cannot
// take a new file: better before the download than after it.
func probeDir(out string) error {
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".probe-*")
	if err != nil {
		return usagef("cannot write the output %s: %v", out, unwrapPathError(err))
	}
	_ = f.Close()
	return os.Remove(f.Name())
}

// seamBytes is how much of the partial's end a continuation asks for again
// and compares: as many as a continuation within a run does.
const seamBytes = 16

// checkContinuation checks a 206 to the Range request from byte from
// against the record of the first answer, as strictly as a continuation
// within a run is checked, and returns the body's total length.
func checkContinuation(resp *http.Response, rec *partialRecord, from int64) (int64, error) {
	cr := resp.Header.Get("Content-Range")
	first, last, total, ok := resume.ParseContentRange(cr)
	switch {
	case !ok || first != from || total <= last: // "*" for first or total is -1
		return 0, fmt.Errorf("the server's Content-Range %s does not start at byte %d", strconv.Quote(cr), from)
	case rec.Length >= 0 && total != rec.Length:
		return 0, fmt.Errorf("the server's Content-Range %s says the body is no longer %d bytes", strconv.Quote(cr), rec.Length)
	case last != total-1:
		return 0, fmt.Errorf("the server's Content-Range %s stops before the end of the body", strconv.Quote(cr))
	case resp.ContentLength >= 0 && resp.ContentLength != last-first+1:
		return 0, fmt.Errorf("the server's Content-Length %d contradicts its Content-Range %s", resp.ContentLength, strconv.Quote(cr))
	}
	if et := resp.Header.Get("Etag"); rec.ETag != "" && et != rec.ETag {
		if et == "" {
			return 0, fmt.Errorf("the server answered without the ETag %s the partial was written with", strconv.Quote(rec.ETag))
		}
		return 0, fmt.Errorf("the server answered with ETag %s, not the partial's %s", strconv.Quote(et), strconv.Quote(rec.ETag))
	}
	if lm := resp.Header.Get("Last-Modified"); rec.LastModified != "" && lm != rec.LastModified && (rec.ETag == "" || lm != "") {
		// Last-Modified is compared whenever it was recorded; only an
		// ETag that matched excuses its absence.
		return 0, fmt.Errorf("the server answered with Last-Modified %s, not the partial's %s", strconv.Quote(lm), strconv.Quote(rec.LastModified))
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		return 0, fmt.Errorf("the server sent the rest with Content-Encoding %s", strconv.Quote(ce))
	}
	return total, nil
}

// skipOverlap reads the bytes from..have the continuation repeats and
// checks them against the partial's.
func (d *download) skipOverlap(f *os.File, body io.Reader, from, have int64) error {
	mine, theirs := make([]byte, have-from), make([]byte, have-from)
	if _, err := f.ReadAt(mine, from); err != nil {
		return fmt.Errorf("reading %s: %w", partialPath(d.out), err)
	}
	if _, err := io.ReadFull(body, theirs); err != nil {
		red := d.client.Redactor()
		return &interruptedError{err: fmt.Errorf("reading the body of %s: %w", red.URL(d.target), red.Error(err)), state: partialPath(d.out)}
	}
	if string(mine) != string(theirs) {
		return fmt.Errorf("refusing to continue %s: its last %d bytes differ from the server's bytes %d-%d, so the partial is not a prefix of this body; remove it to start again",
			partialPath(d.out), have-from, from, have-1)
	}
	return nil
}

// strongOnly keeps a strong ETag; a weak one cannot guard a range.
func strongOnly(etag string) string {
	if strings.HasPrefix(etag, `"`) && strings.HasSuffix(etag, `"`) && len(etag) >= 2 {
		return etag
	}
	return ""
}

// strongDate returns Last-Modified when it can guard a range: a valid date
// at least a second before the answer's Date (RFC 9110, 8.8.2.2).
func strongDate(h http.Header) string {
	lm := h.Get("Last-Modified")
	mod, err := http.ParseTime(lm)
	if err != nil {
		return ""
	}
	if date, err := http.ParseTime(h.Get("Date")); err == nil && date.Sub(mod) < time.Second {
		return ""
	}
	return lm
}

// countingWriter writes to the partial, the hash and the progress bar,
// keeping the write error apart from the read's.
type countingWriter struct {
	f    *os.File
	h    hash.Hash
	bar  render.Download
	werr error
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if n > 0 {
		w.h.Write(p[:n])
		w.bar.Add(n)
	}
	if err != nil {
		w.werr = err
	}
	return n, err
}

// parseSHA256 checks a --sha256 argument.
func parseSHA256(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.ToLower(strings.TrimSpace(s)))
	if err != nil || len(b) != sha256.Size {
		return nil, usagef("--sha256 %q: want 64 hexadecimal digits", s)
	}
	return b, nil
}

// unguarded says why an answer offers no validator that could guard a
// range, in the user's words.
func unguarded(h http.Header) string {
	switch etag, lm := h.Get("Etag"), h.Get("Last-Modified"); {
	case strings.HasPrefix(etag, "W/"):
		return "the server's ETag " + strconv.Quote(etag) + " is weak, and a weak ETag cannot guard a byte range"
	case lm != "" && etag == "":
		return "the server's Last-Modified is not at least a second before its Date, too recent to prove the body unchanged"
	case etag != "":
		return "the server's ETag " + strconv.Quote(etag) + " is malformed"
	}
	return "the server sent neither an ETag nor a Last-Modified"
}

// cannotContinue says why no later run can continue the partial of rec
// after err broke its body, "" when one can.
func cannotContinue(rec *partialRecord, err error) string {
	var re *resume.Error
	switch {
	case rec.validator() == "":
		return rec.Unguarded
	case errors.As(err, &re):
		return re.Reason
	}
	return ""
}

// finalLine is get's last line: what was saved, how long it took and its
// hash, the value --sha256 takes to check the same file again.
//
//	saved 12.3 MB into dump.tar in 4.2s (sha256 9f86d0...)
func finalLine(size int64, where string, took time.Duration, sum []byte) string {
	s := "saved " + render.FormatBytes(size)
	if where != "" {
		s += " into " + where
	}
	return s + " in " + took.Round(time.Millisecond).String() + " (sha256 " + hex.EncodeToString(sum) + ")"
}

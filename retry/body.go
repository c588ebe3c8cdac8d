package retry

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/steadyhttp/steady/liveness"
)

// drainLimit and drainTime bound what is read from a discarded attempt's body
// so its connection can be reused: a small error page is read to its end; a
// large or stalled one is cut off by closing it.
const (
	drainLimit = 64 << 10
	drainTime  = 2 * time.Second
)

// discard drains a discarded response's body (bounded in bytes and time) and
// closes it. It returns only when the body is closed, so a wait that follows
// never holds a connection.
func discard(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	stop := time.AfterFunc(drainTime, func() { resp.Body.Close() })
	_, _ = io.CopyN(io.Discard, resp.Body, drainLimit)
	stop.Stop()
	resp.Body.Close()
}

// bufferedBody is the body of a response that the transport read inside the
// attempt (see [liveness.WithBodyInAttempt]). Bytes returns it without a
// copy, for the callers that decode it where it lies (they ask for
// interface{ Bytes() []byte }); reading it works like any body.
type bufferedBody struct {
	bytes.Reader
	data []byte
}

func newBufferedBody(data []byte) *bufferedBody {
	b := &bufferedBody{data: data}
	b.Reset(data)
	return b
}

// Bytes returns the whole body. The caller must not modify it.
func (b *bufferedBody) Bytes() []byte { return b.data }

// Close does nothing: the body is already in memory.
func (b *bufferedBody) Close() error { return nil }

// readBody reads inside the attempt what of resp's body the call reads
// there: all of it when its context asks ([liveness.WithBodyInAttempt]),
// else up to PreReadBytes of a body [preReads] selects. An error is the
// attempt's failure; the body is then closed.
func (c *call) readBody(resp *http.Response) error {
	switch {
	case c.inAttempt:
		data, err := readInAttempt(resp, c.bodyLimit, c.p.ReadTimeout, c.tracker)
		if err != nil {
			return err
		}
		resp.Body, resp.ContentLength = newBufferedBody(data), int64(len(data))
	case preReads(c.req.Method, resp, c.p.PreReadBytes):
		return preRead(resp, c.p.PreReadBytes, c.p.ReadTimeout, c.tracker)
	}
	return nil
}

// preReads reports whether resp's body is read inside the attempt, up to
// limit bytes, though the caller reads it later (ADR 0295): the answer to
// a method that reads (GET, HEAD, OPTIONS, TRACE), with a body of unknown
// length or of at most limit bytes, that the body layer could not resume
// (no strong validator on a 200), is not a 206 (a range the caller asked
// for, which the body layer continues) and is not a stream of events or
// records, whose parts must reach the caller as they come ([eventStream]).
func preReads(method string, resp *http.Response, limit int64) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
	default:
		return false
	}
	switch {
	case limit <= 0, resp.Body == nil, resp.Body == http.NoBody, resp.ContentLength == 0,
		resp.ContentLength > limit,
		resp.StatusCode == http.StatusPartialContent, resp.StatusCode == http.StatusSwitchingProtocols,
		eventStream(field(resp.Header, "Content-Type")):
		return false
	}
	return resp.StatusCode != http.StatusOK || resp.Uncompressed || !validated(resp.Header)
}

// eventStream reports whether a Content-Type names a body whose parts
// arrive over time: server-sent events, newline-delimited or sequenced
// JSON, a multipart replace stream, or any type with a stream parameter
// (a Kubernetes watch).
func eventStream(contentType string) bool {
	mt, params, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	for _, s := range streamTypes {
		if len(mt) == len(s) && strings.EqualFold(mt, s) {
			return true
		}
	}
	if params == "" || !strings.Contains(strings.ToLower(params), "stream") {
		return false
	}
	_, p, err := mime.ParseMediaType(contentType)
	_, ok := p["stream"]
	return err == nil && ok
}

var streamTypes = [...]string{"text/event-stream", "application/x-ndjson", "application/jsonl",
	"application/json-seq", "application/stream+json", "multipart/x-mixed-replace"}

// validated reports whether h carries a validator the body layer continues
// a broken body with: a strong ETag, or a Last-Modified at least a second
// older than the response's Date (RFC 9110, 8.8.2.2).
func validated(h http.Header) bool {
	if et := field(h, "Etag"); len(et) >= 2 && et[0] == '"' && et[len(et)-1] == '"' {
		return true
	}
	lm := field(h, "Last-Modified")
	if lm == "" {
		return false
	}
	mod, err := http.ParseTime(lm)
	if err != nil {
		return false
	}
	date, err := http.ParseTime(field(h, "Date"))
	return err != nil || date.Sub(mod) >= time.Second
}

// field returns the first value of the field named by canonicalKey, which
// must already be in canonical form: Header.Get canonicalizes its key on
// every call, a few hundred instructions on each response this reads.
func field(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// preRead reads resp's body inside the attempt, at most limit bytes: a
// body that ended is handed back from memory, a longer one as the bytes
// read followed by the rest of the stream. Reads are bounded by idle and
// mark tr, as [readInAttempt]'s.
func preRead(resp *http.Response, limit int64, idle time.Duration, tr *liveness.Tracker) error {
	data, ended, err := readPrefix(liveness.BoundReads(resp.Body, idle), resp.ContentLength, limit, tr)
	if err != nil {
		resp.Body.Close()
		return err
	}
	if !ended {
		resp.Body = &prefixedBody{Reader: io.MultiReader(bytes.NewReader(data), resp.Body), Closer: resp.Body}
		return nil
	}
	resp.Body.Close()
	resp.Body, resp.ContentLength = newBufferedBody(data), int64(len(data))
	return nil
}

// prefixedBody is a body read in part inside the attempt: those bytes,
// then the rest of the stream, which Close closes.
type prefixedBody struct {
	io.Reader
	io.Closer
}

// readInAttempt reads resp's whole body, at most limit bytes (-1: no limit),
// giving up with a [*liveness.ReadTimeoutError] when a read waits idle
// (<= 0: never) for data: the body is then closed under the read, which
// unblocks a read stuck on a silent connection. Each chunk that arrives
// marks tr. The body is always closed.
func readInAttempt(resp *http.Response, limit int64, idle time.Duration, tr *liveness.Tracker) ([]byte, error) {
	body := liveness.BoundReads(resp.Body, idle)
	defer body.Close()
	most := int64(-1)
	if limit >= 0 {
		most = limit + 1 // one byte past the limit tells a body too large
	}
	buf, ended, err := readPrefix(body, resp.ContentLength, most, tr)
	switch {
	case err != nil:
		return nil, err
	case !ended:
		return nil, &liveness.BodyTooLargeError{Limit: limit}
	}
	return buf, nil
}

// readPrefix reads body until it ends or most bytes (-1: no bound)
// arrived, and reports whether it ended. Each chunk that arrives marks tr.
// cl is the announced length, -1 when unknown.
func readPrefix(body io.Reader, cl, most int64, tr *liveness.Tracker) (buf []byte, ended bool, err error) {
	// A Content-Length sizes the first buffer only up to trustedLength: a
	// liar's promise of gigabytes costs at most that until the bytes come,
	// while a page of the usual size is read into one buffer, not grown
	// through six (a fifth of a harvest's CPU went to that).
	size := initialRead
	if cl >= 0 {
		size = int(min(cl, trustedLength)) + 1 // +1 to see the EOF in the same read
	}
	if most >= 0 && int64(size) > most {
		size = int(most)
	}
	buf = make([]byte, 0, size)
	for most < 0 || int64(len(buf)) < most {
		if len(buf) == cap(buf) {
			// Doubled exactly, never past most: append's own growth
			// rounds a large buffer up to about 2.4 times.
			size := max(2*cap(buf), initialRead)
			if most >= 0 && int64(size) > most {
				size = int(most)
			}
			buf = append(make([]byte, 0, size), buf...)
		}
		room := buf[len(buf):cap(buf)]
		if most >= 0 && int64(len(room)) > most-int64(len(buf)) {
			room = room[:most-int64(len(buf))]
		}
		n, err := body.Read(room)
		if n > 0 {
			buf = buf[:len(buf)+n]
			if tr != nil {
				tr.Mark()
			}
		}
		if err == io.EOF {
			return buf, true, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
	return buf, false, nil
}

// initialRead is the first size of readPrefix's buffer when the length
// is unknown; it then doubles while reads fill it. trustedLength is the
// most a Content-Length may make it.
const (
	initialRead   = 4 << 10
	trustedLength = 128 << 10
)

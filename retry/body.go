package retry

import (
	"bytes"
	"io"
	"net/http"
	"slices"
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

// readInAttempt reads resp's whole body, at most limit bytes (-1: no limit),
// giving up with a [*liveness.ReadTimeoutError] when a read waits idle
// (<= 0: never) for data: the body is then closed under the read, which
// unblocks a read stuck on a silent connection. Each chunk that arrives
// marks tr. The body is always closed.
func readInAttempt(resp *http.Response, limit int64, idle time.Duration, tr *liveness.Tracker) ([]byte, error) {
	body := liveness.BoundReads(resp.Body, idle)
	defer body.Close()
	// The buffer grows with what arrives, never with what the server
	// claims: a Content-Length is a promise, and a liar's promise of
	// gigabytes must cost nothing until the bytes come. A known length
	// only caps the first chunk, so a small body takes one small read.
	size := initialRead
	if cl := resp.ContentLength; cl >= 0 && cl < int64(size) {
		size = int(cl) + 1 // +1 to see the EOF in the same read
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			if limit >= 0 && int64(len(buf)+n) > limit {
				return nil, &liveness.BodyTooLargeError{Limit: limit}
			}
			buf = buf[:len(buf)+n]
			if tr != nil {
				tr.Mark()
			}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// initialRead is the first size of readInAttempt's buffer, which then
// doubles while reads fill it.
const initialRead = 4 << 10

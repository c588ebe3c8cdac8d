package resume

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/steadyhttp/steady/config"
)

// ErrCommitted is the cause when a request body could not be sent again:
// it passed the bound of what is kept to replay it, so it was sent once.
// The error that carries it names the bound.
var ErrCommitted = errors.New("request body committed: sent once, not kept to re-send")

// errReplaced fails a read of a request body that a re-send has replaced.
var errReplaced = errors.New("request body replaced by a re-send")

// replayTotal is what one Transport keeps of request bodies at once.
const replayTotal = config.DefaultReplayTotalBytes

// replayable returns the request to send for req, given a GetBody when it
// has a body without one, and a function to call once the call is over
// (nil when req is sent as it is). A body that is an [io.Seeker] is rewound
// to where it stood; any other is kept as it is read, at most limit bytes
// (<= 0: none), within what the transport keeps of all its requests.
// Past either bound the request is committed: it is sent once, and a
// re-send fails with [ErrCommitted]. The caller's request is not changed.
func (t *Transport) replayable(req *http.Request, limit int64) (*http.Request, func()) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return req, nil
	}
	r := &replay{t: t, src: req.Body, limit: limit}
	if s, ok := req.Body.(io.Seeker); ok {
		if at, err := s.Seek(0, io.SeekCurrent); err == nil {
			r.seeker, r.start = s, at
		}
	}
	if r.seeker == nil && limit <= 0 {
		return req, nil // nothing is kept: sent once, as the retry transport says
	}
	out := req.WithContext(req.Context())
	r.mu.Lock()
	out.Body = r.open()
	r.mu.Unlock()
	out.GetBody = r.getBody
	return out, r.finish
}

// replay is a request body that can be read again: by seeking its source,
// or from the bytes of it kept while the first reads took them. Each
// GetBody opens a new reader and retires the one before, whose reads then
// fail, so an attempt still writing never interleaves with the next.
type replay struct {
	t      *Transport
	src    io.ReadCloser
	seeker io.Seeker // nil: replayed from buf
	start  int64     // where the seeker stood
	limit  int64

	srcMu sync.Mutex // held while src is read
	mu    sync.Mutex // guards what follows
	cur   *replayReader
	buf   []byte // every byte read of src, while kept
	read  int64  // bytes read of src
	end   error  // src's last error, io.EOF at its end
	why   string // why the body is no longer kept; "" while it is
	done  bool   // the call is over: src is closed once its reader is
	shut  bool   // src is closed
}

// open returns a new reader that retires the current one. Called with mu held.
func (r *replay) open() io.ReadCloser {
	r.cur = &replayReader{r: r}
	return r.cur
}

func (r *replay) getBody() (io.ReadCloser, error) {
	if r.seeker != nil {
		r.srcMu.Lock() // a retired reader may still be reading where the seek moves
		defer r.srcMu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.done:
		return nil, fmt.Errorf("%w: the call is over", ErrCommitted)
	case r.why != "":
		return nil, fmt.Errorf("%w: %s", ErrCommitted, r.why)
	case r.seeker != nil:
		if _, err := r.seeker.Seek(r.start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("rewinding the request body: %w", err)
		}
		r.end, r.read = nil, 0
	}
	return r.open(), nil
}

// finish ends the call: nothing more is kept, and src is closed once the
// last reader is (at once when it already is).
func (r *replay) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	r.drop("")
	if r.cur.closed {
		r.close()
	}
}

// drop forgets the kept bytes, for why (""): the call is over. Called
// with mu held.
func (r *replay) drop(why string) {
	r.t.held.Add(-int64(len(r.buf)))
	r.buf = nil
	if r.why == "" {
		r.why = why
	}
}

func (r *replay) close() {
	if !r.shut {
		r.shut = true
		r.src.Close()
	}
}

// took records p, just read of src, and err. Called with mu held.
func (r *replay) took(p []byte, err error) {
	r.read += int64(len(p))
	if err != nil {
		r.end = err
	}
	if r.seeker != nil || r.why != "" || r.done || len(p) == 0 {
		return
	}
	switch {
	case r.read > r.limit:
		r.drop(fmt.Sprintf("it passed the replay bound of %d bytes per request", r.limit))
	case r.t.held.Add(int64(len(p))) > replayTotal:
		r.t.held.Add(-int64(len(p)))
		r.drop(fmt.Sprintf("the transport already keeps its bound of %d bytes of request bodies", replayTotal))
	default:
		r.buf = append(r.buf, p...)
	}
}

// replayReader is one attempt's reader of a [replay].
type replayReader struct {
	r      *replay
	pos    int64 // bytes this reader returned
	closed bool
}

func (rd *replayReader) Read(p []byte) (int, error) {
	r := rd.r
	r.mu.Lock()
	n, err, ok := rd.kept(p)
	r.mu.Unlock()
	if ok {
		return n, err
	}
	r.srcMu.Lock()
	defer r.srcMu.Unlock()
	r.mu.Lock()
	n, err, ok = rd.kept(p) // another reader may have read src while this one waited
	r.mu.Unlock()
	if ok {
		return n, err
	}
	n, err = r.src.Read(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.took(p[:n], err)
	if r.cur != rd {
		return 0, errReplaced // what it read is kept for the reader that replaced it
	}
	rd.pos += int64(n)
	return n, err
}

// kept answers a read from what is known without reading src: the kept
// bytes this reader has not returned, src's end, or why it cannot read.
// ok is false when src must be read. Called with mu held.
func (rd *replayReader) kept(p []byte) (n int, err error, ok bool) {
	r := rd.r
	switch {
	case r.cur != rd || rd.closed:
		return 0, errReplaced, true
	case r.seeker != nil && r.end == nil:
		return 0, nil, false // a seeker is read from where it stands
	case rd.pos < r.read && r.buf == nil:
		return 0, fmt.Errorf("%w: %s", ErrCommitted, r.why), true
	case rd.pos < r.read:
		n = copy(p, r.buf[rd.pos:])
		rd.pos += int64(n)
		return n, nil, true
	case r.end != nil:
		return 0, r.end, true
	}
	return 0, nil, false
}

// Close retires the reader; src is closed when the call is over too.
func (rd *replayReader) Close() error {
	r := rd.r
	r.mu.Lock()
	defer r.mu.Unlock()
	rd.closed = true
	if r.done && r.cur == rd {
		r.close()
	}
	return nil
}

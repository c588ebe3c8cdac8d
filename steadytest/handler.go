package steadytest

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Handler serves the collection and applies faults. It is the whole of a
// [Server] without the listener, for serving on an address of your choosing
// (steady serve does). Reset faults hijack the connection, which needs an
// HTTP/1 server; elsewhere the handler aborts the response with
// [http.ErrAbortHandler] instead. Call [Handler.Close] before shutting the
// http.Server down, so that hung and stalled handlers return at once.
type Handler struct {
	opt          ServerOptions // with defaults applied
	itemsKeyJSON []byte        // "key" JSON-encoded, with quotes
	cursorJSON   []byte

	seq      atomic.Int64
	mu       sync.Mutex
	log      []*Request
	attempts map[uint64]int // page -> requests so far
	quota    quotaState

	done      chan struct{} // closed by Close; every wait selects on it
	closeOnce sync.Once
}

// NewHandler returns a handler for opt, or an [*OptionsError] naming the
// first option that is out of range.
func NewHandler(opt ServerOptions) (*Handler, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	// Copies, so that a caller changing its options later races with nothing.
	opt.Faults.Mix = slices.Clone(opt.Faults.Mix)
	opt.Faults.Script = maps.Clone(opt.Faults.Script)
	h := &Handler{
		opt:      opt,
		attempts: make(map[uint64]int),
		done:     make(chan struct{}),
	}
	h.itemsKeyJSON, _ = json.Marshal(opt.ItemsKey)
	h.cursorJSON, _ = json.Marshal(opt.CursorField)
	return h, nil
}

// Close releases every request waiting in a hang, stall or drip: each
// aborts its connection and returns. Requests arriving later are served,
// but any wait in them ends at once. Close is idempotent.
func (h *Handler) Close() {
	h.closeOnce.Do(func() { close(h.done) })
}

// Requests returns a copy of the request log, in arrival order.
func (h *Handler) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Request, len(h.log))
	for i, r := range h.log {
		out[i] = r.clone()
	}
	return out
}

// exchange is one request in progress.
type exchange struct {
	h      *Handler
	w      http.ResponseWriter
	r      *http.Request
	rc     *http.ResponseController
	entry  *Request // nil when the log keeps nothing
	fault  Fault
	status int
	ok     int // the status of a page served whole; 0 means 200
}

// ServeHTTP serves GET (and HEAD) requests to [ItemsPath], [LookupPath] and
// "/", which describes the endpoints.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{h: h, w: w, r: r, rc: http.NewResponseController(w)}
	data := (r.URL.Path == ItemsPath || r.URL.Path == LookupPath) &&
		(r.Method == http.MethodGet || r.Method == http.MethodHead)
	keyOK := h.keyPresent(r)
	entry := h.begin(r, data, keyOK)
	x.entry = entry
	defer h.finish(x)
	if h.opt.OnRequest != nil {
		h.opt.OnRequest(entry.clone())
	}

	if target := r.URL.RequestURI(); len(target) > h.opt.MaxURLBytes {
		x.fail(http.StatusRequestURITooLong, "uri_too_long",
			"the request target is "+strconv.Itoa(len(target))+" bytes; at most "+strconv.Itoa(h.opt.MaxURLBytes)+" are accepted")
		return
	}
	switch r.URL.Path {
	case "/", ItemsPath, LookupPath:
	default:
		x.fail(http.StatusNotFound, "not_found", "no endpoint at "+truncate(r.URL.Path)+"; try "+ItemsPath+" or "+LookupPath)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		x.fail(http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed; use GET")
		return
	}
	if r.URL.Path == "/" {
		x.index()
		return
	}
	if h.opt.RequireKey && !keyOK {
		x.fail(http.StatusUnauthorized, "unauthorized", "a valid API key is required")
		return
	}
	if r.URL.Path == ItemsPath {
		x.items()
	} else {
		x.lookup()
	}
}

// begin logs the request and returns its entry.
func (h *Handler) begin(r *http.Request, data, keyOK bool) *Request {
	e := &Request{
		Time:       time.Now(),
		Method:     r.Method,
		Host:       r.Host,
		URL:        h.redactTarget(r.URL.RequestURI()),
		Header:     h.redactHeader(r.Header),
		KeyPresent: keyOK,
	}
	if data {
		e.Seq = int(h.seq.Add(1))
	}
	if h.opt.LogLimit < 0 {
		return e
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.opt.LogLimit > 0 && len(h.log) >= h.opt.LogLimit {
		drop := max(len(h.log)/4, 1)
		h.log = append(h.log[:0], h.log[drop:]...)
	}
	h.log = append(h.log, e)
	return e
}

// finish records the outcome of x in its log entry. It runs deferred, so an
// aborted handler is recorded too.
func (h *Handler) finish(x *exchange) { x.record() }

// record copies the fault and status into the log entry. It runs before
// anything reaches the client as well, so that a client that has its
// response finds the log already saying why.
func (x *exchange) record() {
	x.h.mu.Lock()
	defer x.h.mu.Unlock()
	x.entry.Fault = x.fault
	x.entry.Status = x.status
}

// admit counts one request to a page and applies the quota; it returns the
// fault to apply, or ok=false when the quota refused the request.
func (x *exchange) admit(call Call, page uint64) (ok bool) {
	h := x.h
	if q := h.opt.Faults.Quota; q.Limit > 0 {
		now := time.Now()
		allowed, remaining, end := h.quota.take(q, now)
		setQuotaHeaders(x.w.Header(), q, remaining, now, end)
		if !allowed {
			x.fault = Fault{Kind: QuotaExceeded}
			x.w.Header().Set("Retry-After", strconv.FormatInt(ceilSeconds(end.Sub(now)), 10))
			x.fail(http.StatusTooManyRequests, "rate_limited", "the request quota of "+strconv.Itoa(q.Limit)+" per "+q.window().String()+" is spent")
			return false
		}
	}
	h.mu.Lock()
	h.attempts[page]++
	call.Attempt = h.attempts[page]
	x.entry.Attempt = call.Attempt
	h.mu.Unlock()
	x.fault = h.opt.Faults.decide(call, page)
	return true
}

// items serves one page of the collection.
func (x *exchange) items() {
	h, r := x.h, x.r
	if h.opt.Style >= Offset {
		x.styledItems()
		return
	}
	offset, limit, ok := x.pageParams()
	if !ok {
		return
	}
	page := pageKey("items", strconv.Itoa(offset), strconv.Itoa(limit))
	if !x.admit(Call{Seq: x.entry.Seq, Path: ItemsPath, Offset: offset, Limit: limit}, page) {
		return
	}
	if !x.preface() {
		return
	}

	rows := h.opt.Rows
	start := min(offset, rows)
	end := min(offset+limit, rows)
	scheme, host := origin(r)
	links := h.newPageLinks(r, scheme, host, limit)
	next := x.nextOf(links, scheme, host, offset, end)

	buf := getBuf()
	defer putBuf(buf)
	hdr := x.w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("X-Total-Count", strconv.Itoa(rows))
	if h.opt.Style == LinkHeader {
		hdr.Set("Link", linkHeader(links, next, offset, limit, rows))
	}
	b := x.pageBody((*buf)[:0], scheme, host, next, start, end)
	*buf = b
	x.deliver(b)
}

// pageParams reads the page's offset (or cursor) and limit, answering 400
// and reporting false when one is bad.
func (x *exchange) pageParams() (offset, limit int, ok bool) {
	h, q := x.h, x.r.URL.Query()
	limit, err := parseLimit(q.Get("limit"), q.Has("limit"), h.opt.DefaultLimit, h.opt.MaxLimit)
	if err != nil {
		x.badParam(err)
		return 0, 0, false
	}
	if h.opt.Style == Cursor {
		if c := q.Get(h.opt.CursorParam); q.Has(h.opt.CursorParam) {
			offset, err = decodeCursor(c)
		}
	} else {
		offset, err = parseOffset(q.Get("offset"), q.Has("offset"))
	}
	if err != nil {
		x.badParam(err)
		return 0, 0, false
	}
	return offset, limit, true
}

// nextOf returns the page's next link, or for Cursor style its next cursor,
// corrupted as the page's fault asks ("" on the last page).
func (x *exchange) nextOf(links pageLinks, scheme, host string, offset, end int) string {
	h := x.h
	var next string
	if end < h.opt.Rows {
		if h.opt.Style == Cursor {
			next = encodeCursor(end)
		} else {
			next = links.at(end)
		}
	}
	switch x.fault.Kind {
	case ForeignNext, UserinfoNext:
		if next == "" || h.opt.Style == Cursor {
			x.fault = Fault{} // nothing to corrupt
		} else if x.fault.Kind == ForeignNext {
			next = rehost(next, h.otherHost(host))
		} else {
			next = withUserinfo(next)
		}
	case RepeatNext:
		if h.opt.Style == Cursor {
			next = encodeCursor(offset)
		} else {
			next = h.self(x.r, scheme, host)
		}
	}
	return next
}

// pageBody appends to b the JSON of the page holding rows start..end-1 in
// the server's style, with next as its link or cursor.
func (x *exchange) pageBody(b []byte, scheme, host, next string, start, end int) []byte {
	h := x.h
	switch h.opt.Style {
	case LinkHeader:
		if h.opt.ItemsKey == "" {
			return appendRows(b, start, end)
		}
		b = append(b, '{')
		b = append(b, h.itemsKeyJSON...)
		b = append(b, ':')
		b = appendRows(b, start, end)
		return append(b, '}')
	case JSONLinks:
		// numberMatched and numberReturned, as OGC API Features pages
		// announce the collection's size and the page's.
		b = append(b, `{"numberMatched":`...)
		b = strconv.AppendInt(b, int64(h.opt.Rows), 10)
		b = append(b, `,"numberReturned":`...)
		b = strconv.AppendInt(b, int64(end-start), 10)
		b = append(b, ',')
		b = append(b, h.itemsKeyJSON...)
		b = append(b, ':')
		b = appendRows(b, start, end)
		b = append(b, `,"links":[{"rel":"self","href":`...)
		b = appendJSONString(b, h.self(x.r, scheme, host))
		b = append(b, '}')
		if next != "" {
			b = append(b, `,{"rel":"next","href":`...)
			b = appendJSONString(b, next)
			b = append(b, '}')
		}
		return append(b, "]}"...)
	case Cursor:
		b = append(b, '{')
		b = append(b, h.itemsKeyJSON...)
		b = append(b, ':')
		b = appendRows(b, start, end)
		b = append(b, ',')
		b = append(b, h.cursorJSON...)
		b = append(b, ':')
		if next == "" {
			b = append(b, "null"...)
		} else {
			b = appendJSONString(b, next)
		}
		return append(b, '}')
	}
	return b
}

// linkHeader returns the Link field of a page: next and last while there are
// more pages, first and prev after the first.
func linkHeader(l pageLinks, next string, offset, limit, rows int) string {
	var parts []string
	if next != "" {
		parts = append(parts, "<"+next+`>; rel="next"`)
		if rows > 0 {
			parts = append(parts, "<"+l.at((rows-1)/limit*limit)+`>; rel="last"`)
		}
	}
	if offset > 0 && rows > 0 {
		// Past the end, the previous page is the last one.
		prev := max(min(offset-limit, (rows-1)/limit*limit), 0)
		parts = append(parts, "<"+l.at(0)+`>; rel="first"`, "<"+l.at(prev)+`>; rel="prev"`)
	}
	return strings.Join(parts, ", ")
}

// appendRows appends the JSON array of rows start+1..end.
func appendRows(b []byte, start, end int) []byte {
	b = append(b, '[')
	for id := start + 1; id <= end; id++ {
		if id > start+1 {
			b = append(b, ',')
		}
		b = appendRow(b, id)
	}
	return append(b, ']')
}

// lookup serves the rows named by the ids parameter, one per id in request
// order; ids that name no row are listed under "missing".
func (x *exchange) lookup() {
	h := x.h
	ids, err := parseIDs(x.r.URL.Query()["ids"])
	if err != nil {
		x.badParam(err)
		return
	}
	page := pageKey("lookup", strings.Join(ids, ","))
	if !x.admit(Call{Seq: x.entry.Seq, Path: LookupPath, Limit: len(ids)}, page) {
		return
	}
	switch x.fault.Kind {
	case ForeignNext, UserinfoNext, RepeatNext:
		x.fault = Fault{} // a lookup has no next link
	}
	if !x.preface() {
		return
	}
	buf := getBuf()
	defer putBuf(buf)
	b := append((*buf)[:0], `{"items":[`...)
	var missing []string
	first := true
	for _, id := range ids {
		n, ok := lookupID(id, h.opt.Rows)
		if !ok {
			missing = append(missing, id)
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendRow(b, n)
	}
	b = append(b, `],"missing":[`...)
	for i, id := range missing {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, id)
	}
	b = append(b, "]}"...)
	*buf = b
	x.w.Header().Set("Content-Type", "application/json")
	x.deliver(b)
}

// index describes the endpoints, for a person exploring a served instance.
func (x *exchange) index() {
	scheme, host := origin(x.r)
	base := scheme + "://" + host
	body, _ := json.Marshal(map[string]any{
		"items":  base + ItemsPath,
		"lookup": base + LookupPath + "?ids=1,2,3",
		"rows":   x.h.opt.Rows,
		"style":  x.h.opt.Style.String(),
		"limit":  map[string]int{"default": x.h.opt.DefaultLimit, "max": x.h.opt.MaxLimit},
	})
	x.w.Header().Set("Content-Type", "application/json")
	x.deliver(body)
}

func (x *exchange) badParam(err error) {
	pe, ok := err.(*paramError)
	if !ok {
		pe = &paramError{"bad_request", err.Error()}
	}
	x.fail(http.StatusBadRequest, pe.code, pe.message)
}

// fail sends a JSON error: {"error": code, "message": message}.
func (x *exchange) fail(status int, code, message string) {
	body, _ := json.Marshal(struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}{code, message})
	x.send(status, "application/json", body)
}

// send writes a complete response.
func (x *exchange) send(status int, contentType string, body []byte) {
	hdr := x.w.Header()
	hdr.Set("Content-Type", contentType)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	x.writeHeader(status)
	_, _ = x.w.Write(body)
}

func (x *exchange) writeHeader(status int) {
	x.status = status
	x.record()
	x.w.WriteHeader(status)
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	j, err := json.Marshal(s)
	if err != nil { // cannot happen for a string
		return append(b, `""`...)
	}
	return append(b, j...)
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 4<<20 { // keep the pool from pinning a huge page
		bufPool.Put(b)
	}
}

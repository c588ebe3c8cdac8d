package steadytest

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// preface applies the faults that strike before the body is built: an error
// status, a redirect, a reset, a hang. It reports whether the page should
// still be served.
func (x *exchange) preface() bool {
	f := x.fault
	switch f.Kind {
	case Status:
		x.statusFault(f)
		return false
	case Redirect:
		scheme, host := origin(x.r)
		target := rehost(x.h.self(x.r, scheme, host), x.h.otherHost(host))
		x.w.Header().Set("Location", target)
		x.send(f.status(), "text/plain; charset=utf-8", []byte("moved to "+target+"\n"))
		return false
	case Reset:
		x.reset(nil)
		return false
	case Hang:
		if !x.pause(f.For) {
			x.abort()
		}
	}
	return true
}

// statusFault answers with f's status. Gateways answer 502 and 504 with an
// HTML page, so a client that assumes JSON bodies on errors meets one here.
func (x *exchange) statusFault(f Fault) {
	status := f.status()
	if f.RetryAfter > 0 {
		v := strconv.FormatInt(ceilSeconds(f.RetryAfter), 10)
		if f.RetryAfterDate {
			v = ceilSecond(time.Now().Add(f.RetryAfter)).UTC().Format(http.TimeFormat)
		}
		x.w.Header().Set("Retry-After", v)
	}
	text := http.StatusText(status)
	if text == "" {
		text = "Error"
	}
	if status == http.StatusBadGateway || status == http.StatusGatewayTimeout {
		page := fmt.Sprintf("<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n</body>\r\n</html>\r\n", status, text, status, text)
		x.send(status, "text/html", []byte(page))
		return
	}
	code := map[int]string{429: "rate_limited", 500: "internal_error", 503: "unavailable"}[status]
	if code == "" {
		code = "http_" + strconv.Itoa(status)
	}
	x.fail(status, code, "injected fault: "+strconv.Itoa(status)+" "+text)
}

// ceilSecond rounds t up to a whole second: an HTTP-date has no fraction,
// and rounding down would name a moment before the wait is over.
func ceilSecond(t time.Time) time.Time {
	s := t.Truncate(time.Second)
	if s.Before(t) {
		s = s.Add(time.Second)
	}
	return s
}

// deliver sends a 200 with body, applying any mid-body fault. The full
// Content-Length is always declared, so a client can tell a short body from
// a complete one.
func (x *exchange) deliver(body []byte) {
	hdr := x.w.Header()
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	f := x.fault
	if len(body) == 0 || x.r.Method == http.MethodHead {
		switch f.Kind {
		case Stall, ResetMidBody, Truncate, Drip:
			x.fault = Fault{} // no body to cut
			f = x.fault
		}
	}
	switch f.Kind {
	case ResetMidBody:
		x.reset(body[:f.cut(len(body))])
	case Truncate:
		// Returning with fewer bytes than declared makes net/http close the
		// connection after flushing them: a clean close, an early EOF.
		x.writeHeader(x.okStatus())
		_, _ = x.w.Write(body[:f.cut(len(body))])
	case Stall:
		n := f.cut(len(body))
		x.writeHeader(x.okStatus())
		_, _ = x.w.Write(body[:n])
		_ = x.rc.Flush()
		if !x.pause(f.For) {
			x.abort()
		}
		_, _ = x.w.Write(body[n:])
	case Drip:
		x.writeHeader(x.okStatus())
		step := f.chunk()
		for i := 0; i < len(body); i += step {
			if i > 0 && !x.pause(f.every()) {
				x.abort()
			}
			_, _ = x.w.Write(body[i:min(i+step, len(body))])
			_ = x.rc.Flush()
		}
	default:
		x.writeHeader(x.okStatus())
		_, _ = x.w.Write(body)
	}
}

// okStatus is the status of a page served whole: 200, or what the style
// set (206 for part of a Range).
func (x *exchange) okStatus() int {
	if x.ok != 0 {
		return x.ok
	}
	return http.StatusOK
}

// pause waits d (forever when d <= 0). It reports false when the wait was
// cut short because the client went away or the handler was closed. Only the
// time package is used, so the wait is virtual inside a synctest bubble.
func (x *exchange) pause(d time.Duration) bool {
	var elapsed <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		elapsed = t.C
	}
	select {
	case <-elapsed:
		return true
	case <-x.r.Context().Done():
		return false
	case <-x.h.done:
		return false
	}
}

// abort ends the response without completing it: net/http recovers this
// panic silently and closes the connection, so the client never mistakes a
// cut response for a whole one.
func (x *exchange) abort() {
	panic(http.ErrAbortHandler)
}

// reset sends the status line, headers and prefix of the body (when prefix
// is not nil), then resets the connection: with SO_LINGER at 0 the close
// sends a TCP RST instead of a FIN. Without a hijackable connection it
// aborts the handler instead, the nearest equivalent (a stream reset on
// HTTP/2).
func (x *exchange) reset(prefix []byte) {
	conn, rw, err := x.rc.Hijack()
	if err != nil {
		x.abort()
	}
	if prefix != nil {
		x.status = http.StatusOK
	}
	x.record()
	defer func() {
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = conn.Close()
	}()
	if prefix == nil {
		return
	}
	writeRawHead(rw.Writer, x.w.Header())
	_, _ = rw.Write(prefix)
	_ = rw.Flush()
}

// writeRawHead writes a 200 status line and headers to a hijacked
// connection.
func writeRawHead(w *bufio.Writer, hdr http.Header) {
	_, _ = w.WriteString("HTTP/1.1 200 OK\r\n")
	if hdr.Get("Date") == "" {
		hdr.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	_ = hdr.Write(w)
	_, _ = w.WriteString("\r\n")
}

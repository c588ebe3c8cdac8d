package redisquota

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
)

// The bounds of a reply (ADR 292): far above anything the store's scripts
// or the client's handshake send, far below what would hurt a process.
// They are checked as the reply streams in, before the client reads a
// header and allocates what it announces.
const (
	maxReplyBytes    = 1 << 20 // bulk payload bytes in one reply
	maxReplyElements = 1024    // elements announced in one reply, all levels
	maxReplyDepth    = 8       // nested aggregates
	maxReplyLine     = 64 << 10
)

// ErrReplyTooLarge is the cause of a call whose reply announced more than
// a store reply may hold; the connection is dropped and the call answered
// locally.
var ErrReplyTooLarge = errors.New("redisquota: reply exceeds the store's bounds")

// boundDialer wraps dial so every connection's replies are bounded.
func boundDialer(dial func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		b := &boundedConn{Conn: c}
		if _, ok := c.(syscall.Conn); ok {
			return sysConn{b}, nil
		}
		return b, nil
	}
}

// sysConn is a boundedConn over a socket, which the client's pool peeks at
// (without reading) to tell a connection the server closed while idle.
type sysConn struct{ *boundedConn }

func (c sysConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}

// A boundedConn passes bytes through a RESP scanner that refuses a reply
// over the bounds; once it has, every read fails.
type boundedConn struct {
	net.Conn
	mu  sync.Mutex
	s   replyScanner
	err error
}

func (c *boundedConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if serr := c.s.scan(p[:n]); serr != nil {
		c.err = serr
		_ = c.Conn.Close()
		return 0, serr
	}
	return n, err
}

// replyScanner follows the RESP2/RESP3 framing of a stream of replies:
// header lines, bulk payloads to skip, and the count of elements still
// owed at each level of nesting.
type replyScanner struct {
	bulk    int64 // payload bytes (with CRLF) still to skip; 0: at a line
	line    int   // bytes of the current line so far
	kind    byte  // the current line's type byte
	num     int64 // its length field so far
	neg     bool
	digits  bool
	bad     bool // a length field that is not a number
	owed    []int64
	elems   int64 // announced in the current reply
	payload int64
}

func (s *replyScanner) scan(b []byte) error {
	for len(b) > 0 {
		if s.bulk > 0 {
			k := min(int64(len(b)), s.bulk)
			s.bulk -= k
			b = b[k:]
			if s.bulk == 0 {
				s.done()
			}
			continue
		}
		c := b[0]
		b = b[1:]
		if err := s.byte(c); err != nil {
			return err
		}
	}
	return nil
}

func (s *replyScanner) byte(c byte) error {
	s.line++
	if s.line > maxReplyLine {
		return fmt.Errorf("%w: a line longer than %d bytes", ErrReplyTooLarge, maxReplyLine)
	}
	switch {
	case s.line == 1:
		s.kind, s.num, s.neg, s.digits, s.bad = c, 0, false, false, false
	case c == '\n':
		s.line = 0
		return s.header()
	case c == '\r':
	case c == '-' && s.line == 2:
		s.neg = true
	case c >= '0' && c <= '9':
		s.digits = true
		if s.num <= 1<<40 {
			s.num = s.num*10 + int64(c-'0')
		}
	default:
		s.bad = true
	}
	return nil
}

// header acts on a complete line.
func (s *replyScanner) header() error {
	switch s.kind {
	case '$', '=', '!', '*', '~', '>', '%', '|':
	default:
		s.done() // a simple value: status, error, number, null, boolean
		return nil
	}
	if s.bad || !s.digits {
		return fmt.Errorf("%w: a malformed length in a %q header", ErrReplyTooLarge, s.kind)
	}
	if s.neg { // a RESP2 null
		s.done()
		return nil
	}
	n := s.num
	switch s.kind {
	case '$', '=', '!':
		s.payload += n
		if s.payload > maxReplyBytes {
			return fmt.Errorf("%w: %d bytes announced, at most %d", ErrReplyTooLarge, s.payload, maxReplyBytes)
		}
		s.bulk = n + 2
		return nil
	case '%', '|':
		n *= 2
	}
	s.elems += n
	if s.elems > maxReplyElements {
		return fmt.Errorf("%w: %d elements announced, at most %d", ErrReplyTooLarge, s.elems, maxReplyElements)
	}
	if s.kind == '|' {
		return fmt.Errorf("%w: an attribute, which no store reply carries", ErrReplyTooLarge)
	}
	if n == 0 {
		s.done()
		return nil
	}
	if len(s.owed) == maxReplyDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrReplyTooLarge, maxReplyDepth)
	}
	s.owed = append(s.owed, n)
	return nil
}

// done counts a complete value against the aggregates owed one; when none
// is owed, the reply is complete and the next starts from zero.
func (s *replyScanner) done() {
	for len(s.owed) > 0 {
		top := len(s.owed) - 1
		s.owed[top]--
		if s.owed[top] > 0 {
			return
		}
		s.owed = s.owed[:top]
	}
	s.elems, s.payload = 0, 0
}

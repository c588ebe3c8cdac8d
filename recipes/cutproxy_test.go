package recipes_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// cutProxy is a TCP proxy on 127.0.0.1 that cuts the connection carrying
// a chosen request: after some bytes of its upload (a cut upload) or of
// its answer (a cut body). It reads the request line at the start of
// each request the client writes, as HTTP/1.1 without pipelining writes
// it, so a rule can pick a request on a kept-alive connection.
type cutProxy struct {
	l      net.Listener
	target string

	mu    sync.Mutex
	rules []*cutRule
	cuts  []string // request lines of the connections cut, in order
	wg    sync.WaitGroup
	conns map[net.Conn]bool
}

// A cutRule cuts the next times requests whose request line starts with
// line: after up bytes of the upload, or after down bytes of the answer.
type cutRule struct {
	line     string
	up, down int64
	times    int
	before   func() // run as the cut is made, before the connection closes (nil: none)
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *cutProxy) addr() string { return p.l.Addr().String() }

// cut adds a rule.
func (p *cutProxy) cut(r cutRule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &r)
}

// done returns the request lines of the connections cut so far.
func (p *cutProxy) done() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.cuts...)
}

func (p *cutProxy) close() {
	p.l.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *cutProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.pipe(c)
	}
}

// track adds or removes a connection to close at the end.
func (p *cutProxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
}

// A link is one proxied connection; its byte budgets are armed by the
// rule that matched its current request (-1: no cut).
type link struct {
	p              *cutProxy
	client, server net.Conn
	mu             sync.Mutex
	up, down       int64
	line           string
	before         func()
	once           sync.Once
}

func (p *cutProxy) pipe(client net.Conn) {
	defer p.wg.Done()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	l := &link{p: p, client: client, server: server, up: -1, down: -1}
	p.track(client, true)
	p.track(server, true)
	done := make(chan struct{})
	go func() {
		l.copy(server, client, true)
		close(done)
	}()
	l.copy(client, server, false)
	<-done
	l.shut("")
	p.track(client, false)
	p.track(server, false)
}

// copy moves bytes from src to dst until either side ends or a budget is
// spent, then closes both ends.
func (l *link) copy(dst, src net.Conn, upload bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if upload {
				l.arm(chunk)
			}
			keep, cut := l.spend(int64(len(chunk)), upload)
			if _, werr := dst.Write(chunk[:keep]); werr != nil {
				l.shut("")
				return
			}
			if cut {
				l.mu.Lock()
				before := l.before
				l.mu.Unlock()
				if before != nil {
					before()
				}
				l.shut(l.line)
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				l.shut("")
				return
			}
			// A half close: pass it on, keep the other way open.
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			return
		}
	}
}

var methods = [][]byte{[]byte("GET "), []byte("PUT "), []byte("POST "), []byte("HEAD "), []byte("DELETE ")}

// arm reads a request line at the start of chunk and arms the first rule
// it matches.
func (l *link) arm(chunk []byte) {
	start := false
	for _, m := range methods {
		start = start || bytes.HasPrefix(chunk, m)
	}
	if !start {
		return
	}
	line, _, _ := bytes.Cut(chunk, []byte("\r\n"))
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	for _, r := range l.p.rules {
		if r.times > 0 && bytes.HasPrefix(line, []byte(r.line)) {
			r.times--
			l.mu.Lock()
			l.up, l.down, l.line, l.before = r.up, r.down, string(line), r.before
			if r.up == 0 {
				l.up = -1
			}
			if r.down == 0 {
				l.down = -1
			}
			l.mu.Unlock()
			return
		}
	}
}

// spend takes n bytes from the direction's budget: how many may pass, and
// whether the connection is cut after them.
func (l *link) spend(n int64, upload bool) (keep int64, cut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	budget := &l.down
	if upload {
		budget = &l.up
	}
	if *budget < 0 {
		return n, false
	}
	if n < *budget {
		*budget -= n
		return n, false
	}
	keep = *budget
	*budget = -1
	return keep, true
}

// shut closes both ends once, recording a cut for line when it is set.
func (l *link) shut(line string) {
	l.once.Do(func() {
		if line != "" {
			l.p.mu.Lock()
			l.p.cuts = append(l.p.cuts, line)
			l.p.mu.Unlock()
		}
		l.client.Close()
		l.server.Close()
	})
}

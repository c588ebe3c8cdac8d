package retry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/retry"
)

// oneByteThenCut is a body that delivers one byte and then breaks, as a
// server does that claims a huge Content-Length and hangs up.
type oneByteThenCut struct{ sent bool }

func (b *oneByteThenCut) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		p[0] = 'x'
		return 1, nil
	}
	return 0, io.ErrUnexpectedEOF
}

func (b *oneByteThenCut) Close() error { return nil }

// A server's Content-Length is a claim, not a size to allocate: requests
// that each claim a terabyte and send one byte must cost what arrived, not
// what was promised (the attack held 64 MiB per request before).
func TestBodyInAttemptAllocatesWhatArrivesNotWhatIsClaimed(t *testing.T) {
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &oneByteThenCut{},
			ContentLength: 1 << 40, Request: r}, nil
	})
	tr := retry.New(inner, retry.Policy{MaxAttempts: 1})
	const requests = 8
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range requests {
		ctx := liveness.WithBodyInAttempt(context.Background(), 0)
		resp, err := tr.RoundTrip(get(ctx, "http://api.test/big"))
		if err == nil {
			resp.Body.Close()
			t.Fatal("a body cut after one byte was accepted")
		}
	}
	runtime.ReadMemStats(&after)
	// A claimed length sizes the first buffer up to 128 KiB; the rest of
	// an attempt costs a few KiB.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(requests)*(128+16)<<10; got > limit {
		t.Errorf("%d requests claiming 1 TiB and sending 1 byte allocated %d bytes; want at most %d", requests, got, limit)
	}
}

// The growth is still linear: a real large body arrives whole, and the
// buffer it ends in is not wildly larger than the body.
func TestBodyInAttemptGrowsToARealBody(t *testing.T) {
	const size = 3<<20 + 17
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(&chunky{data: data}),
			ContentLength: size, Request: r}, nil
	})
	tr := retry.New(inner, retry.Policy{MaxAttempts: 1})
	resp, err := tr.RoundTrip(get(liveness.WithBodyInAttempt(context.Background(), 0), "http://api.test/big"))
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Body.(interface{ Bytes() []byte }).Bytes()
	if len(got) != size || string(got) != string(data) {
		t.Fatalf("got %d bytes, want the %d sent, identical", len(got), size)
	}
	if c := cap(got); c > 2*size {
		t.Errorf("a %d-byte body sits in a %d-byte buffer", size, c)
	}
}

// chunky returns at most 100 KB a read, like a socket.
type chunky struct{ data []byte }

func (c *chunky) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 100_000)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// lateStall delivers one byte after first, then nothing until closed.
type lateStall struct {
	first  time.Duration
	sent   bool
	closed chan struct{}
	once   sync.Once
}

func (b *lateStall) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		time.Sleep(b.first)
		p[0] = 'x'
		return 1, nil
	}
	<-b.closed
	return 0, errors.New("read on a closed body")
}

func (b *lateStall) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

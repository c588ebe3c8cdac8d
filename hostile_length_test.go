package steady_test

import (
	"bufio"
	"context"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/steadyhttp/steady"
)

// A server on the wire that announces a terabyte and sends ten bytes
// before it hangs up, to every attempt of many calls at once: each
// attempt costs what a Content-Length may reserve (128 KiB, ADR 0366) and
// a little more, never the claim, and every call ends in an error.
func TestHostileClaimedLengthCostsWhatArrives(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	var served sync.WaitGroup
	served.Add(1)
	go func() {
		defer served.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			served.Add(1)
			go func() {
				defer served.Done()
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
					return
				}
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1099511627776\r\n\r\n[1,2,3,4,"))
			}()
		}
	}()
	defer func() { ln.Close(); served.Wait() }()

	c := newClient(t, steady.Options{BaseURL: "http://" + ln.Addr().String(), Policy: fast()})
	const calls = 16
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range calls {
		wg.Go(func() {
			if err := c.GetJSON(context.Background(), "/big", nil, new(any)); err != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	if failed.Load() != calls {
		t.Fatalf("%d of %d calls failed; a body cut short of its length must fail each", failed.Load(), calls)
	}
	n := conns.Load()
	if got, most := after.TotalAlloc-before.TotalAlloc, uint64(n)*(128+64)<<10; got > most {
		t.Errorf("%d attempts at a claimed terabyte allocated %d bytes; want at most %d (192 KiB an attempt)", n, got, most)
	}
}

package redisquota_test

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/redisquota"
)

// liar is a TCP server that answers every line with reply, whatever was
// asked: something that is not Redis, or a Redis that lies.
func liar(t *testing.T, reply string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					_ = c.SetDeadline(time.Now().Add(2 * time.Second))
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					if _, err := c.Write([]byte(reply)); err != nil {
						return
					}
				}
			})
		}
	})
	return l.Addr().String()
}

// A store that answers garbage, the wrong shape or absurd numbers is an
// error answered locally or a lease clamped to what was asked; never a
// panic, a negative wait or more permits than wanted.
func TestStoreThatLies(t *testing.T) {
	for _, c := range []struct{ name, reply string }{
		{"http", "HTTP/1.1 400 Bad Request\r\n\r\n"},
		{"error", "-ERR no\r\n"},
		{"string", "+OK\r\n"},
		{"short array", "*1\r\n:5\r\n"},
		{"old shape", "*4\r\n:5\r\n:0\r\n:0\r\n:1000\r\n"},
		{"negative", "*5\r\n:-5\r\n:-1000\r\n:-1\r\n:-1\r\n:-1\r\n"},
		{"huge", "*5\r\n:9223372036854775807\r\n:9223372036854775807\r\n:9223372036854775807\r\n:9223372036854775807\r\n:1\r\n"},
		{"wrong type", "*5\r\n$1\r\nx\r\n:1\r\n:1\r\n:1\r\n:1\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := open(t, "redis://"+liar(t, c.reply)+"/0?name=liar")
			l, err := p.store.TakeQuota(t.Context(), "h", ratelimit.LeaseCall{Want: 3})
			if err == nil && (l.Count < 0 || l.Count > 3 || l.Start < 0 || l.Interval < 0 || l.TTL < 0 || l.Start > ratelimit.MaxPeriod) {
				t.Errorf("lease %+v from a lying store", l)
			}
			b := &budget.Budget{Store: p.store}
			b.Withdraw(time.Now()) // must not panic; answered one way or the other
		})
	}
}

// A URL that is not a store URL is a typed error naming it, its password
// hidden; a namespace that cannot name keys is refused.
func TestOpenRefuses(t *testing.T) {
	for _, raw := range []string{"", "redis://", "http://h:1/0", "redis://h:1/x", "redis://u:sekrit@h:1/0?bogus=1",
		"redis://h:1/0?name=" + strings.Repeat("n", 65), "redis://h:1/0?name=a%20b", "redis://h:1/0?name=%7Bx%7D"} {
		s, c, err := redisquota.Open(raw)
		if err == nil {
			c.Close()
			t.Errorf("Open(%q) = %v; want an error", raw, s)
			continue
		}
		if !errors.Is(err, redisquota.ErrURL) && !errors.Is(err, redisquota.ErrName) {
			t.Errorf("Open(%q): %v; want ErrURL or ErrName", raw, err)
		}
		if strings.Contains(err.Error(), "sekrit") {
			t.Errorf("Open(%q): the password is in %q", raw, err)
		}
	}
	s, c, err := redisquota.Open("redis://127.0.0.1:1/3?name=ok.name-1_x")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if s == nil || c.Options().DB != 3 || c.Options().MaxRetries > 0 {
		t.Errorf("Open: db %d, retries %d; want db 3 and no client re-sends", c.Options().DB, c.Options().MaxRetries)
	}
}

// FuzzOpen: no URL makes Open panic, and every refusal is typed.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379/0", "rediss://u:p@h:1/2?name=x", "redis://[::1]:1/0", "redis://h/0?name=" + strconv.Itoa(1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, c, err := redisquota.Open(raw)
		if err != nil {
			if !errors.Is(err, redisquota.ErrURL) && !errors.Is(err, redisquota.ErrName) {
				t.Fatalf("Open(%q): untyped error %v", raw, err)
			}
			return
		}
		if s == nil {
			t.Fatal("nil store without an error")
		}
		c.Close()
	})
}

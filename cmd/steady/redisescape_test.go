package main

import (
	"bufio"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// hostileRedis answers every command with an error whose text carries
// terminal escapes.
func hostileRedis(t *testing.T, reply string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if !strings.HasPrefix(line, "*") {
						continue
					}
					n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
					for range 2 * n { // each argument: its $length line, then its bytes
						if _, err := r.ReadString('\n'); err != nil {
							return
						}
					}
					if _, err := c.Write([]byte(reply)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// A store's error text reaches stderr escaped like every other text a
// server controls: no raw escape reaches the terminal.
func TestSharedQuotaErrorTextEscaped(t *testing.T) {
	addr := hostileRedis(t, "-ERR \x1b]0;pwned\x07\x1b[2J gone\r\n")
	t.Setenv(envSharedQuota, "")
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	code, _, stderr := cli(t, "harvest", redisHarvestServer(t, 300), "-o", out, "-q", "--shared-quota", "redis://"+addr+"/0?name=x")
	if strings.ContainsAny(stderr, "\x1b\x07") {
		t.Errorf("raw escapes on stderr: %q", stderr)
	}
	if !strings.Contains(stderr, `\x1b`) {
		t.Errorf("exit %d; the store's error is not named on stderr: %q", code, stderr)
	}
}

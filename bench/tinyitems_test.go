package bench

import (
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

var tinyPages = flag.Int("tiny.pages", 0, "pages of TestTinyItemsRSS (0 skips it): `steady harvest -o` of pages just under the 64 MiB page limit, each of 2-byte items (\"1,\"), its max RSS held to 3x the limit")

// TestTinyItemsRSS harvests pages at the page limit made of the smallest
// items JSON has with the real command, and reads the harvesting process's
// maximum resident set from its rusage:
//
//	go test -run TinyItemsRSS -tiny.pages 6 -v ./bench
func TestTinyItemsRSS(t *testing.T) {
	if *tinyPages == 0 {
		t.Skip("-tiny.pages not set")
	}
	const limit = 64 << 20 // the command's default page limit (config.DefaultMaxBodyBytes)
	n := (limit - 100) / 2
	body := make([]byte, 0, limit)
	body = append(body, '[')
	for i := range n {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, '1')
	}
	body = append(body, ']')
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if p < *tinyPages {
			w.Header().Set("Link", fmt.Sprintf("<?page=%d>; rel=next", max(p, 1)+1))
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	defer srv.Close()

	dir := t.TempDir()
	bin := filepath.Join(dir, "steady")
	build := exec.Command("go", "build", "-o", bin, "github.com/steadyhttp/steady/cmd/steady")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out.jsonl")
	cmd := exec.Command(bin, "harvest", srv.URL+"/items?page=1", "-o", out, "-q")
	cmd.Env = append(os.Environ(), os.Getenv("TINY_ENV"))
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("harvest: %v\n%s", err, msg)
	}
	if len(msg) > 0 {
		t.Logf("harvest said:\n%s", msg)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2 * n * *tinyPages); fi.Size() != want {
		t.Fatalf("wrote %d bytes, want %d (%d lines of \"1\\n\")", fi.Size(), want, n**tinyPages)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	t.Logf("%d pages of %d items (%d bytes each): max RSS %d MiB, %.2fx the page limit", *tinyPages, n, len(body), rss>>20, float64(rss)/limit)
	if rss > 3*limit {
		t.Errorf("max RSS %d bytes, more than 3x the page limit of %d", rss, limit)
	}
}

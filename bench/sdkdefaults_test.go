package bench

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/internal/limitertest"
	"github.com/steadyhttp/steady/retry"
)

// The figures of issue 22's "SDK-ready by default": the memory of a
// streamed upload through the bounded replay buffer, and the facade's
// default pacing behind a real express-rate-limit. Neither runs in the
// default suite.

var (
	putMiB    = flag.Int("put.mib", 0, "size in MiB of TestStreamedPutRSS's upload (0 skips it)")
	putRounds = flag.Int("put.rounds", 3, "interleaved rounds of TestStreamedPutRSS")
	defRounds = flag.Int("defaults.rounds", 0, "rounds of TestDefaultPacing (0 skips it)")
)

// TestStreamedPutRSS uploads put.mib MiB of a body that can be neither
// rewound nor replayed whole (a generator behind an io.Pipe, no GetBody)
// from a child process, once through a bare http.Client and once through
// the facade with its defaults, interleaved round by round, to a server in
// this process that discards it. Each child reports its own peak resident
// set (VmHWM); the facade's median must stay within 8 MiB of the bare
// client's: the replay buffer keeps at most Policy.ReplayBytes (1 MiB) of
// a body, then commits it.
//
//	go -C bench test -run TestStreamedPutRSS -put.mib 1024 -v
func TestStreamedPutRSS(t *testing.T) {
	if *putMiB == 0 {
		t.Skip("run with -put.mib N")
	}
	size := int64(*putMiB) << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, n)
	}))
	defer srv.Close()
	rss := map[string][]int64{}
	modes := []string{"bare", "steady"}
	for range *putRounds {
		for _, mode := range modes {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestStreamedPutChild$", "-test.count", "1")
			cmd.Env = append(os.Environ(), "BENCH_PUT_MODE="+mode, "BENCH_PUT_URL="+srv.URL+"/upload",
				"BENCH_PUT_BYTES="+strconv.FormatInt(size, 10))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s child: %v\n%s", mode, err, out)
			}
			kb, ok := childRSS(out)
			if !ok {
				t.Fatalf("%s child said no VmHWM:\n%s", mode, out)
			}
			rss[mode] = append(rss[mode], kb)
		}
	}
	bare, paced := medianKB(rss["bare"]), medianKB(rss["steady"])
	t.Logf("streamed PUT of %d MiB, %d rounds: max RSS bare http.Client median %d KiB %v, facade defaults median %d KiB %v: %+d KiB",
		*putMiB, *putRounds, bare, rss["bare"], paced, rss["steady"], paced-bare)
	if paced-bare > 8<<10 {
		t.Errorf("the facade's upload peaked %d KiB over the bare client's; the bound is 8 MiB", paced-bare)
	}
}

// childRSS reads the "vmhwm_kb N" line a child printed.
func childRSS(out []byte) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "vmhwm_kb "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func medianKB(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestStreamedPutChild is the child of TestStreamedPutRSS: one upload, then
// its own peak resident set.
func TestStreamedPutChild(t *testing.T) {
	mode := os.Getenv("BENCH_PUT_MODE")
	if mode == "" {
		t.Skip("the child of TestStreamedPutRSS")
	}
	size, err := strconv.ParseInt(os.Getenv("BENCH_PUT_BYTES"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: http.DefaultTransport}
	if mode == "steady" {
		c, err := steady.New(steady.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		client = c.HTTP()
	}
	pr, pw := io.Pipe()
	go func() {
		chunk := bytes.Repeat([]byte("steady streamed upload\n"), 32<<10/23)
		for left := size; left > 0; {
			n := min(left, int64(len(chunk)))
			if _, err := pw.Write(chunk[:n]); err != nil {
				return
			}
			left -= n
		}
		pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPut, os.Getenv("BENCH_PUT_URL"), pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != strconv.FormatInt(size, 10) {
		t.Fatalf("PUT: %s, server received %s bytes of %d", resp.Status, got, size)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("vmhwm_kb %s\n", strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
}

// TestDefaultPacing walks a collection behind a real express-rate-limit
// with the facade as steady.New(steady.Options{}) makes it, in each header
// form, beside the same facade with pacing off, interleaved round by round
// against a fresh server each time: the median wall time against the
// quota's floor, and the 429s each drew. The defaults must draw no 429;
// the goal for the time is 1.01x the floor, logged as met or missed, since
// a loaded machine adds its round trips to every window. The legacy form
// names its reset in whole Unix seconds, which the pacer waits for (ADR
// 0321): up to a second a window, so it runs with 2 s and 10 s windows.
//
//	go -C bench test -run TestDefaultPacing -defaults.rounds 3 -v
func TestDefaultPacing(t *testing.T) {
	if *defRounds == 0 {
		t.Skip("run with -defaults.rounds N")
	}
	clients := []struct {
		name string
		opt  steady.Options
	}{
		{"defaults", steady.Options{}},
		{"NoPacing", steady.Options{Policy: retry.Policy{NoPacing: true}}},
	}
	cases := []struct {
		form                  string
		rows, limit, windowMs int
	}{
		{"draft-6", 61, 20, 2000}, {"draft-7", 61, 20, 2000}, {"draft-8", 61, 20, 2000},
		{"legacy", 61, 20, 2000}, {"legacy", 41, 20, 10000},
	}
	for _, k := range cases {
		lim := []limitertest.Limiter{{Limit: k.limit, WindowMs: k.windowMs, Headers: k.form}}
		floor := limitertest.Floor(k.rows, lim)
		times := make([][]time.Duration, len(clients))
		refused := make([]int, len(clients))
		for range *defRounds {
			for i, c := range clients {
				srv := limitertest.Start(t, limitertest.Config{Rows: k.rows, Page: 1, Limiters: lim})
				sc, err := steady.New(c.opt)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				got := walk(t, sc.HTTP(), srv.URL+"/items?offset=0&limit=1")
				times[i] = append(times[i], time.Since(start))
				sc.CloseIdleConnections()
				if got != k.rows {
					t.Errorf("%s %s: %d rows, want %d", k.form, c.name, got, k.rows)
				}
				_, r := srv.Stats(t)
				refused[i] += r
				srv.Stop()
			}
		}
		for i, c := range clients {
			m := median(times[i])
			ratio := m.Seconds() / floor.Seconds()
			goal := ""
			if c.name == "defaults" {
				goal = "goal 1.01x met"
				if ratio > 1.01 {
					goal = "goal 1.01x missed"
				}
				if refused[i] > 0 {
					t.Errorf("%s: the defaults drew %d 429s", k.form, refused[i])
				}
			}
			t.Logf("%-7s %2d/%5dms %-9s median %v (%.3fx the %v floor), %d 429s in %d walks %s",
				k.form, k.limit, k.windowMs, c.name, m.Round(time.Millisecond), ratio, floor, refused[i], *defRounds, goal)
		}
	}
}

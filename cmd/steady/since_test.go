package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// sinceServer serves rows {"id":N,"updated":U} whose updated is at least
// the since parameter (inclusive, as many APIs are), two a page by Link
// header, with X-Total-Count; ignore makes it serve every row whatever
// since says.
type sinceServer struct {
	mu     sync.Mutex
	rows   [][2]int // id, updated
	ignore bool
	asked  []string // the since value of each request, "-" for none
}

func (s *sinceServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.URL.Query()
	since, has := q.Get("since"), q.Has("since")
	if has {
		s.asked = append(s.asked, since)
	} else {
		s.asked = append(s.asked, "-")
	}
	var sel [][2]int
	floor, _ := strconv.Atoi(since)
	for _, row := range s.rows {
		if !has || s.ignore || row[1] >= floor {
			sel = append(sel, row)
		}
	}
	page, _ := strconv.Atoi(q.Get("page"))
	from := min(page*2, len(sel))
	to := min(from+2, len(sel))
	if to < len(sel) {
		n := *r.URL
		v := n.Query()
		v.Set("page", strconv.Itoa(page+1))
		n.RawQuery = v.Encode()
		w.Header().Set("Link", "<"+n.String()+`>; rel="next"`)
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(len(sel)))
	var items []string
	for _, row := range sel[from:to] {
		items = append(items, fmt.Sprintf(`{"id":%d,"updated":%d}`, row[0], row[1]))
	}
	fmt.Fprint(w, "["+strings.Join(items, ",")+"]")
}

func (s *sinceServer) add(id, updated int) {
	s.mu.Lock()
	s.rows = append(s.rows, [2]int{id, updated})
	s.mu.Unlock()
}

// An incremental harvest: the second run asks for the rows after the
// first run's highest value, appends them, and skips the row at that value
// that an inclusive server sends again; every row is in the file once. A
// third run whose server ignores the parameter, sending rows older than the
// floor, fails (exit 1) and leaves the published file as it was.
func TestHarvestSince(t *testing.T) {
	for _, ext := range []string{".jsonl", ".json", ".jsonl.gz", ".jsonl.zst"} {
		t.Run(ext, func(t *testing.T) {
			s := &sinceServer{}
			for i := 1; i <= 5; i++ {
				s.add(i, 10*i)
			}
			srv := httptest.NewServer(s)
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "rows"+ext)
			args := []string{"harvest", "-q", "--pages", "link", srv.URL + "/items", "-o", out, "--since-field", "updated", "--since-param", "since"}
			if code, _, errText := cli(t, args...); code != exitOK {
				t.Fatalf("first run: exit %d, %s", code, errText)
			}
			s.add(6, 50) // at the floor, new: kept
			s.add(7, 60)
			s.add(8, 70)
			if code, _, errText := cli(t, args...); code != exitOK {
				t.Fatalf("second run: exit %d, %s", code, errText)
			}
			if got := readIDs(t, out); fmt.Sprint(got) != "[1 2 3 4 5 6 7 8]" {
				t.Errorf("rows %v", got)
			}
			if got := strings.Join(s.asked, " "); !strings.HasSuffix(got, "50 50") || strings.Count(got, "-") != 3 {
				t.Errorf("since asked: %s", got)
			}
			published, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			s.ignore = true
			s.add(9, 80)
			code, _, errText := cli(t, args...)
			if code != exitFailed || !strings.Contains(errText, "older than 70") || !strings.Contains(errText, "since=70") {
				t.Fatalf("third run: exit %d, %s", code, errText)
			}
			if now, _ := os.ReadFile(out); string(now) != string(published) {
				t.Error("the published file changed")
			}
		})
	}
}

// readIDs reads the ids of a harvest output by its extension.
func readIDs(t *testing.T, path string) []int {
	t.Helper()
	format, err := formatOf(path, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return outputIDs(t, path, format)
}

func TestCompareSince(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"9", "10", -1},     // numbers, not text
		{"1e3", "999.5", 1}, // any JSON number
		{"123456789012345678901", "123456789012345678900", 1},     // past float64
		{"2026-01-01T10:00:00+02:00", "2026-01-01T09:00:00Z", -1}, // instants, not text
		{"2026-01-01T09:00:00Z", "2026-01-01T09:00:00.000Z", 0},
		{"b", "a", 1},
		{"10", "abc", -1}, // one is not a number: text
		{"x", "", 1},
	}
	for _, c := range cases {
		if got := compareSince(c.a, c.b); got != c.want {
			t.Errorf("compareSince(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := compareSince(c.b, c.a); got != -c.want {
			t.Errorf("compareSince(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

func TestSinceUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--since-field", "updated"},
		{"--since-param", "since"},
		{"--since-field", "updated", "--since-param", "since", "-o", "x.csv"},
		{"--since-field", "updated", "--since-param", "since"}, // no -o
		{"--since-field", "a..b", "--since-param", "since", "-o", "x.jsonl"},
	} {
		code, _, errText := cli(t, append([]string{"harvest", "-q", "http://127.0.0.1:1/items"}, args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, %s", args, code, errText)
		}
	}
}

// A first run over an empty collection records no value: the next run
// harvests everything, replacing the output, and records the value.
func TestHarvestSinceFromEmpty(t *testing.T) {
	s := &sinceServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	args := []string{"harvest", "-q", "--pages", "link", srv.URL + "/items", "-o", out, "--since-field", "updated", "--since-param", "since"}
	for run, add := range []int{0, 3, 2} {
		for range add {
			n := len(s.rows) + 1
			s.add(n, n)
		}
		if code, _, errText := cli(t, args...); code != exitOK {
			t.Fatalf("run %d: exit %d, %s", run+1, code, errText)
		}
	}
	if got := readIDs(t, out); fmt.Sprint(got) != "[1 2 3 4 5]" {
		t.Errorf("rows %v", got)
	}
	if got := strings.Join(s.asked, " "); got != "- - - 3 3" {
		t.Errorf("since asked: %s", got)
	}
}

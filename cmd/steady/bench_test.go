package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkHarvest compares `steady harvest -o` with the loop people write
// by hand (GET, decode the array, write each item as a line, follow the
// Link header, no state, no fsync) on the same loopback server, at 100 and
// at 1,000 rows a page, 200,000 rows in all:
//
//	bench/rounds.sh 6 ./cmd/steady Harvest
//
// rows/s is the figure to compare; rounds.sh runs both in turn, six times.
func BenchmarkHarvest(b *testing.B) {
	const total = 200000
	for _, per := range []int{100, 1000} {
		srv := harvestServer(total, per)
		url := srv.URL + "/items"
		dir := b.TempDir()
		rows := func(b *testing.B, harvest func(out string) error) {
			out := filepath.Join(dir, "out.jsonl")
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				os.Remove(out)
				if err := harvest(out); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if n := countLines(b, out); n != total {
				b.Fatalf("%d rows written, want %d", n, total)
			}
			b.ReportMetric(float64(total*b.N)/b.Elapsed().Seconds(), "rows/s")
			// The process's CPU time (the loopback server's included, the
			// same for both) per 1,000 rows: steadier than rows/s on a
			// loaded machine.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(total*b.N)*1e3/1e6, "cpu-ms/krow")
		}
		name := fmt.Sprintf("rows/page=%d", per)
		b.Run(name+"/impl=naive", func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
			defer client.CloseIdleConnections()
			rows(b, func(out string) error { return naiveHarvest(client, url, out) })
		})
		b.Run(name+"/impl=steady", func(b *testing.B) {
			rows(b, func(out string) error {
				var stderr bytes.Buffer
				if code := run(context.Background(), []string{"harvest", url, "-o", out, "-q"}, strings.NewReader(""), io.Discard, &stderr); code != exitOK {
					return fmt.Errorf("exit %d: %s", code, stderr.String())
				}
				return nil
			})
		})
		srv.Close()
	}
}

// harvestServer serves total rows, per a page, as top-level arrays linked
// by Link headers; the pages are rendered once.
func harvestServer(total, per int) *httptest.Server {
	pages := make([][]byte, total/per+1)
	for p := 1; p < len(pages); p++ {
		var b bytes.Buffer
		b.WriteByte('[')
		for i := range per {
			id := (p-1)*per + i + 1
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":%d,"name":"row %d","value":%d.25,"ok":true}`, id, id, id)
		}
		b.WriteByte(']')
		pages[p] = b.Bytes()
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := strconv.Atoi(r.URL.Query().Get("page"))
		if err != nil || p < 1 || p >= len(pages) {
			p = 1
		}
		if p+1 < len(pages) {
			w.Header().Set("Link", fmt.Sprintf(`</items?page=%d>; rel="next"`, p+1))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(pages[p])))
		w.Write(pages[p])
	}))
}

// naiveHarvest is the hand-written harvest: no retry, no resume state, no
// fsync.
func naiveHarvest(client *http.Client, next, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 64<<10)
	for next != "" {
		resp, err := client.Get(next)
		if err != nil {
			return err
		}
		var items []json.RawMessage
		err = json.NewDecoder(resp.Body).Decode(&items)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		for _, it := range items {
			w.Write(it)
			w.WriteByte('\n')
		}
		next = ""
		if l := resp.Header.Get("Link"); l != "" {
			href, _, ok := strings.Cut(strings.TrimPrefix(l, "<"), ">")
			if ok && strings.Contains(l, `rel="next"`) {
				u, err := resp.Request.URL.Parse(href)
				if err != nil {
					return err
				}
				next = u.String()
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func countLines(b *testing.B, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Count(data, []byte("\n"))
}

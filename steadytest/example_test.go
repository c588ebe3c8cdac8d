package steadytest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"time"

	"github.com/steadyhttp/steady/steadytest"
)

// Walk a collection of 250 rows by following the Link header.
func ExampleNewServer() {
	s := steadytest.NewServer(steadytest.ServerOptions{Rows: 250})
	defer s.Close()
	next := regexp.MustCompile(`<([^>]*)>; rel="next"`)

	rows, pages := 0, 0
	for url := s.URL + steadytest.ItemsPath; url != ""; {
		resp, err := s.Client().Get(url)
		if err != nil {
			fmt.Println(err)
			return
		}
		var page []steadytest.Row
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			fmt.Println(err)
			return
		}
		rows, pages = rows+len(page), pages+1
		url = ""
		if m := next.FindStringSubmatch(resp.Header.Get("Link")); m != nil {
			url = m[1]
		}
	}
	fmt.Printf("%d rows in %d pages\n", rows, pages)
	// Output: 250 rows in 3 pages
}

// Script the first request to be refused with a server-named wait, and read
// the log to see what each request met.
func ExampleFaults_script() {
	s := steadytest.NewServer(steadytest.ServerOptions{
		Faults: steadytest.Faults{Script: map[int]steadytest.Fault{
			1: {Kind: steadytest.Status, Status: 429, RetryAfter: 2 * time.Second},
		}},
	})
	defer s.Close()
	for range 2 {
		resp, err := s.Client().Get(s.URL + steadytest.ItemsPath + "?limit=10")
		if err != nil {
			fmt.Println(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Printf("%d Retry-After=%q\n", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for _, r := range s.Requests() {
		fmt.Printf("#%d %s: %v\n", r.Seq, r.URL, r.Fault)
	}
	// Output:
	// 429 Retry-After="2"
	// 200 Retry-After=""
	// #1 /items?limit=10: status 429 retry-after 2s (seconds)
	// #2 /items?limit=10: none
}

// Every row is a pure function of its id.
func ExampleRowFor() {
	b, _ := json.Marshal(steadytest.RowFor(1))
	fmt.Println(string(b))
	// Output: {"id":1,"name":"rusty back\\slash #1","value":3622.2,"timestamp":"2026-01-01T00:00:37Z"}
}

// Serve the flaky API on a listener of your own, as steady serve does.
func ExampleNewHandler() {
	h, err := steadytest.NewHandler(steadytest.ServerOptions{Rows: 10, Style: steadytest.Cursor, Faults: steadytest.Mild(1)})
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer func() {
		h.Close() // release held requests first
		srv.Close()
	}()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + ln.Addr().String() + steadytest.ItemsPath + "?limit=4")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var page struct {
		Data       []steadytest.Row `json:"data"`
		NextCursor *string          `json:"next_cursor"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.StatusCode, len(page.Data), *page.NextCursor, resp.Header.Get("X-RateLimit-Remaining"))
	// Output: 200 4 bzE6NA 49
}

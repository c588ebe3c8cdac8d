package steady_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/internal/handwalk"
	"github.com/steadyhttp/steady/paginate"
)

// The facade's goals, each beside the loop people write by hand, in one run:
//
//	bench/rounds.sh 6 . Facade
//
// Each benchmark's contenders are sub-benchmarks of one function (impl=...),
// and rounds.sh runs the whole set in turn, six times, and reports medians.
// Where the machine is too busy for times, allocs/op is exact and
// bench/callgrind.sh counts instructions per op.

// memTransport answers every request with the same body from memory: no
// sockets, so what is measured is the client code alone.
type memTransport struct {
	body []byte
	ct   string
}

func (m *memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {m.ct}},
		Body:          io.NopCloser(bytes.NewReader(m.body)),
		ContentLength: int64(len(m.body)),
		Request:       req,
	}, nil
}

// benchRow takes two fields of each row: the decoding allocates little, so
// what the client adds around it shows.
type benchRow struct {
	ID    int     `json:"id"`
	Value float64 `json:"value"`
}

// jsonRows renders an array of rows of about size bytes.
func jsonRows(size int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; b.Len() < size-80; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"row %d","value":%d.5,"tags":["a","b"]}`, i, i, i)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func BenchmarkFacadeGetJSON(b *testing.B) {
	for _, size := range []int{2 << 10, 1 << 20} {
		mem := &memTransport{body: jsonRows(size), ct: "application/json"}
		name := fmt.Sprintf("size=%dKB", size>>10)
		b.Run(name+"/impl=hand", func(b *testing.B) {
			client := &http.Client{Transport: mem}
			ctx := context.Background()
			b.SetBytes(int64(len(mem.body)))
			b.ReportAllocs()
			for b.Loop() {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://api.example.gov/v1/items?limit=100", nil)
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Accept", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				var rows []benchRow
				err = json.NewDecoder(resp.Body).Decode(&rows)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || len(rows) == 0 {
					b.Fatalf("%d rows, status %d: %v", len(rows), resp.StatusCode, err)
				}
			}
		})
		b.Run(name+"/impl=steady", func(b *testing.B) {
			c, err := steady.New(steady.Options{BaseURL: "https://api.example.gov/v1/", Transport: mem})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.SetBytes(int64(len(mem.body)))
			b.ReportAllocs()
			for b.Loop() {
				var rows []benchRow
				if err := c.GetJSON(ctx, "items?limit=100", nil, &rows); err != nil || len(rows) == 0 {
					b.Fatalf("%d rows: %v", len(rows), err)
				}
			}
		})
	}
}

// BenchmarkFacadeHTTP compares one GET through a bare *http.Client, through
// the facade's HTTP() client and through Do, on the same in-memory response.
func BenchmarkFacadeHTTP(b *testing.B) {
	mem := &memTransport{body: []byte(`{"id":1,"name":"row","value":1.5}`), ct: "application/json"}
	c, err := steady.New(steady.Options{Transport: mem})
	if err != nil {
		b.Fatal(err)
	}
	const target = "https://api.example.gov/v1/items/1"
	bare := &http.Client{Transport: mem}
	b.Run("impl=bare", func(b *testing.B) { benchGets(b, target, len(mem.body), bare.Do) })
	b.Run("impl=HTTP", func(b *testing.B) { benchGets(b, target, len(mem.body), c.HTTP().Do) })
	b.Run("impl=Do", func(b *testing.B) { benchGets(b, target, len(mem.body), c.Do) })
}

// benchGets sends GETs to target through do, each body of size bytes read
// to its end and closed, for as long as b runs.
func benchGets(b *testing.B, target string, size int, do func(*http.Request) (*http.Response, error)) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || n != int64(size) {
			b.Fatalf("status %d, %d bytes: %v", resp.StatusCode, n, err)
		}
	}
}

// BenchmarkFacadeOverLoopback is BenchmarkFacadeHTTP against a real server
// on 127.0.0.1 through a real connection pool: the bare client through an
// http.Transport tuned as the facade's, the facade through its own. What
// each request costs there beyond the facade's own code (the server, the
// connection, net/http's reading and writing) is what a program talking to
// a server pays, so this is the ratio it sees; BenchmarkFacadeHTTP
// isolates the facade's share.
func BenchmarkFacadeOverLoopback(b *testing.B) {
	body := []byte(`{"id":1,"name":"row","value":1.5}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	c, err := steady.New(steady.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	target := srv.URL + "/v1/items/1"
	// The bare client's pool is tuned and bounded as the facade's (newPool
	// in client.go), timeouts included, so the ratio shows the facade's
	// code and not net/http's timers.
	dialer := &net.Dialer{Timeout: config.DefaultConnectTimeout, KeepAlive: 30 * time.Second}
	pool := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   config.DefaultConcurrent,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   config.DefaultConnectTimeout,
		ResponseHeaderTimeout: config.DefaultReadTimeout,
		ExpectContinueTimeout: time.Second,
	}
	defer pool.CloseIdleConnections()
	bare := &http.Client{Transport: pool}
	b.Run("impl=bare", func(b *testing.B) { benchGets(b, target, len(body), bare.Do) })
	b.Run("impl=HTTP", func(b *testing.B) { benchGets(b, target, len(body), c.HTTP().Do) })
	b.Run("impl=Do", func(b *testing.B) { benchGets(b, target, len(body), c.Do) })
}

// BenchmarkFacadeWalk walks 100 OGC-style pages of 100 features over
// loopback through the facade's Pages and through the hand loop (a
// json.Decoder per page, following links[]).
func BenchmarkFacadeWalk(b *testing.B) {
	const n, per = 100, 100
	pages := walkPages(n, per)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := strconv.Atoi(r.URL.Query().Get("page"))
		if err != nil || p < 1 || p > n {
			p = 1
		}
		w.Header().Set("Content-Type", "application/geo+json")
		w.Header().Set("Content-Length", strconv.Itoa(len(pages[p])))
		w.Write(pages[p])
	}))
	defer srv.Close()
	var size int64
	for _, p := range pages {
		size += int64(len(p))
	}
	run := func(b *testing.B, walk func() (int, int, error)) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			got, items, err := walk()
			if err != nil || got != n || items != n*per {
				b.Fatalf("walked %d pages, %d items: %v", got, items, err)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N*n), "µs/page")
	}
	b.Run("impl=hand", func(b *testing.B) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
		defer client.CloseIdleConnections()
		run(b, func() (int, int, error) { return handwalk.Walk(client, srv.URL+"/items") })
	})
	b.Run("impl=steady", func(b *testing.B) {
		c, err := steady.New(steady.Options{BaseURL: srv.URL})
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseIdleConnections()
		opt := paginate.Options{Next: paginate.JSONLinks, Items: "features"}
		run(b, func() (int, int, error) {
			got, items := 0, 0
			for p, err := range c.Pages(context.Background(), "/items", nil, opt) {
				if err != nil {
					return got, items, err
				}
				got++
				items += p.Items.Len()
			}
			return got, items, nil
		})
	})
}

// walkPages renders n pages of per features, page p linking to p+1.
func walkPages(n, per int) [][]byte {
	pages := make([][]byte, n+1)
	for p := 1; p <= n; p++ {
		var b strings.Builder
		b.WriteString(`{"type":"FeatureCollection","features":[`)
		for i := range per {
			id := (p-1)*per + i
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"type":"Feature","id":%d,"geometry":{"type":"Point","coordinates":[%d.125,%d.5]},"properties":{"name":"feature %d","value":%d}}`, id, id%180, id%90, id, id*3)
		}
		fmt.Fprintf(&b, `],"links":[{"rel":"self","href":"/items?page=%d"}`, p)
		if p < n {
			fmt.Fprintf(&b, `,{"rel":"next","href":"/items?page=%d"}`, p+1)
		}
		b.WriteString(`]}`)
		pages[p] = []byte(b.String())
	}
	return pages
}

package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/failsafe-go/failsafe-go/failsafehttp"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/steadyhttp/steady/retry"
)

// The same server and the same tuned inner transport for every contender,
// so the difference is the retry layer alone.
func newServer() *httptest.Server {
	body := []byte(`{"id":1,"name":"row","value":1.5}`)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
}

func newInner() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return t
}

func run(b *testing.B, rt http.RoundTripper, url string) {
	b.Helper()
	client := &http.Client{Transport: rt}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// BenchmarkGET: a successful GET on loopback through each transport.
func BenchmarkGET(b *testing.B) {
	srv := newServer()
	defer srv.Close()

	b.Run("bare", func(b *testing.B) {
		inner := newInner()
		defer inner.CloseIdleConnections()
		run(b, inner, srv.URL)
	})
	b.Run("steady", func(b *testing.B) {
		inner := newInner()
		defer inner.CloseIdleConnections()
		run(b, retry.New(inner, retry.Policy{}), srv.URL)
	})
	b.Run("retryablehttp", func(b *testing.B) {
		inner := newInner()
		defer inner.CloseIdleConnections()
		c := retryablehttp.NewClient()
		c.HTTPClient.Transport = inner
		c.Logger = nil
		run(b, &retryablehttp.RoundTripper{Client: c}, srv.URL)
	})
	b.Run("failsafe", func(b *testing.B) {
		inner := newInner()
		defer inner.CloseIdleConnections()
		run(b, failsafehttp.NewRoundTripper(inner, failsafehttp.NewRetryPolicyBuilder().Build()), srv.URL)
	})
}

// fixed answers every request at once from memory, so the benchmark below
// measures each retry layer's own cost without the network's noise.
type fixed struct{}

func (fixed) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(`{"id":1}`)), ContentLength: 8, Request: r}, nil
}

// BenchmarkOverhead: the same successful GET through each layer over an
// in-memory transport; "bare" calls the transport directly.
func BenchmarkOverhead(b *testing.B) {
	req, _ := http.NewRequest(http.MethodGet, "http://api.example.gov/items", nil)
	c := retryablehttp.NewClient()
	c.HTTPClient.Transport = fixed{}
	c.Logger = nil
	contenders := []struct {
		name string
		rt   http.RoundTripper
	}{
		{"bare", fixed{}},
		{"steady", retry.New(fixed{}, retry.Policy{})},
		{"retryablehttp", &retryablehttp.RoundTripper{Client: c}},
		{"failsafe", failsafehttp.NewRoundTripper(fixed{}, failsafehttp.NewRetryPolicyBuilder().Build())},
	}
	for _, ct := range contenders {
		b.Run(ct.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := ct.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

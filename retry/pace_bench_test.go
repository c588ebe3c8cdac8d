package retry_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// BenchmarkPacedResponse is the command line's setting (a Pacer and a
// Reporter) on a successful response without rate-limit fields and with
// the fields every response of a limited API carries: the cost of reading
// them is the difference.
//
//	go test -run '^$' -bench PacedResponse -count 10 ./retry/
func BenchmarkPacedResponse(b *testing.B) {
	// GitHub's reset: a Unix time within the hour, so that it is believed
	// and read in full.
	reset := strconv.FormatInt(time.Now().Add(30*time.Minute).Unix(), 10)
	for _, c := range []struct {
		name   string
		header http.Header
	}{
		{"without quota fields", http.Header{"Content-Type": {"application/json"}}},
		{"draft-8 fields", http.Header{"Content-Type": {"application/json"},
			"Ratelimit":        {`"50-in-5sec"; r=37; t=4`},
			"Ratelimit-Policy": {`"50-in-5sec"; q=50; w=5; pk=:ZTNiMGM0NDI5OGZj:`}}},
		{"X-RateLimit fields", http.Header{"Content-Type": {"application/json"},
			"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {"4987"},
			"X-Ratelimit-Reset": {reset}, "X-Ratelimit-Resource": {"core"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			resp := &http.Response{StatusCode: 200, Header: c.header, Body: http.NoBody}
			inner := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				resp.Request = r
				return resp, nil
			})
			tr := retry.New(inner, retry.Policy{Pacer: new(ratelimit.Pacer), Reporter: event.ReporterFunc(func(event.Event) {})})
			req, _ := http.NewRequest(http.MethodGet, "https://api.example.gov/items?page=2", nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tr.RoundTrip(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

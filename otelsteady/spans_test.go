package otelsteady_test

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

const base = "https://api.example.gov"

// Seven bytes or more, so that the watch finds it in base64 at every offset.
var apiKey = credentials.Key{Header: "X-Api-Key", Value: "k-3f9a0c", Hosts: []string{"api.example.gov"}}

func client(t *testing.T, r *rig, bottom http.RoundTripper, p retry.Policy) *steady.Client {
	t.Helper()
	c, err := steady.New(steady.Options{BaseURL: base, Keys: []credentials.Key{apiKey}, Policy: p,
		Reporter: r.adapter, Transport: bottom})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestThreeAttempts: 503, 503, 200 gives three client spans under the
// caller's span, one trace, re-sends counted from 1, the waits on the spans
// of the attempts that failed, and the metrics of two re-sends.
func TestThreeAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		t0, err := r.getItems(t, &scripted{codes: []int{503, 503, 200}, took: 100 * time.Millisecond}, retry.Policy{Rand: constRand(0.5)})
		if err != nil {
			t.Fatal(err)
		}

		const tail = " server.address=api.example.gov server.port=443 url.full=https://api.example.gov/items}"
		diff(t, "spans", r.spanText(t0), []string{
			"GET client parent=caller +0s..+100ms Error {error.type=503 http.request.method=GET http.response.status_code=503" + tail +
				" steady.wait@+100ms{steady.wait.duration=0.25 steady.wait.reason=backoff}",
			"GET client parent=caller +350ms..+450ms Error {error.type=503 http.request.method=GET http.request.resend_count=1 http.response.status_code=503" + tail +
				" steady.wait@+450ms{steady.wait.duration=0.5 steady.wait.reason=backoff}",
			"GET client parent=caller +950ms..+1.05s Unset {http.request.method=GET http.request.resend_count=2 http.response.status_code=200" + tail,
			"caller internal parent=- +0s..+1.05s Unset {}",
		})
		r.sameTrace(t)
		diff(t, "metrics", r.metricText(t), []string{
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=false} = 1",
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=true} = 2",
			"steady.resends{error.type=503 server.address=api.example.gov steady.wait.reason=backoff} = 2",
			"steady.wait.duration{server.address=api.example.gov steady.wait.reason=backoff} count=2 sum=0.75",
		})
	})
}

// TestStalledByTheBudget: attempts that take 100s each against a 60s stall
// budget: the first re-send is never withheld, the second would pass the
// budget, so the call stops after two with a stop event on the second span.
func TestStalledByTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		t0, err := r.getItems(t, &scripted{codes: []int{504}, took: 100 * time.Second},
			retry.Policy{StallTimeout: 60 * time.Second, Rand: constRand(0.5)})
		if !errors.Is(err, retry.ErrStalled) {
			t.Fatalf("err = %v, want ErrStalled", err)
		}
		const tail = " server.address=api.example.gov server.port=443 url.full=https://api.example.gov/items}"
		diff(t, "spans", r.spanText(t0), []string{
			"GET client parent=caller +0s..+1m40s Error {error.type=504 http.request.method=GET http.response.status_code=504" + tail +
				" steady.wait@+1m40s{steady.wait.duration=0.25 steady.wait.reason=backoff}",
			"GET client parent=caller +1m40.25s..+3m20.25s Error {error.type=504 http.request.method=GET http.request.resend_count=1 http.response.status_code=504" + tail +
				" steady.stop@+3m20.25s{steady.stop.reason=stalled}",
			"caller internal parent=- +0s..+3m20.25s Unset {}",
		})
		r.sameTrace(t)
		diff(t, "metrics", r.metricText(t), []string{
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=false} = 1",
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=true} = 1",
			"steady.resends{error.type=504 server.address=api.example.gov steady.wait.reason=backoff} = 1",
			"steady.stops{server.address=api.example.gov steady.stop.reason=stalled} = 1",
			"steady.wait.duration{server.address=api.example.gov steady.wait.reason=backoff} count=1 sum=0.25",
		})
	})
}

// TestRetryAfterAboveTheCap: a 429 asking for an hour stops at once; the
// span says so, with the wait that was refused.
func TestRetryAfterAboveTheCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		t0, err := r.getItems(t, &scripted{codes: []int{429}, header: http.Header{"Retry-After": {"3600"}}}, retry.Policy{})
		var rl *steady.RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("err = %v, want a RateLimitError", err)
		}
		diff(t, "spans", r.spanText(t0), []string{
			"GET client parent=caller +0s..+0s Error {error.type=429 http.request.method=GET http.response.status_code=429" +
				" server.address=api.example.gov server.port=443 url.full=https://api.example.gov/items}" +
				" steady.stop@+0s{steady.stop.reason=retry_after_above_cap steady.wait.duration=3600}",
			"caller internal parent=- +0s..+0s Unset {}",
		})
		diff(t, "metrics", r.metricText(t), []string{
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=false} = 1",
			// A 429 without quota fields halves the host's limit (AIMD).
			"steady.breaker.changes{server.address=api.example.gov steady.breaker.state=limit} = 1",
			"steady.stops{server.address=api.example.gov steady.stop.reason=retry_after_above_cap} = 1",
		})
	})
}

// TestPageWalk: a walk of three pages whose second answers 503 once: one
// span per attempt, each with its page's URL, and the walk's pages and rows.
func TestPageWalk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		var page2 int
		bottom := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			time.Sleep(10 * time.Millisecond)
			switch req.URL.Query().Get("page") {
			case "":
				resp := respond(req, 200, nil, `[1,2,3]`)
				resp.Header.Set("Link", `<`+base+`/items?page=2>; rel="next"`)
				return resp, nil
			case "2":
				if page2++; page2 == 1 {
					return respond(req, 503, nil, ""), nil
				}
				resp := respond(req, 200, nil, `[4,5]`)
				resp.Header.Set("Link", `</items?page=3>; rel="next"`)
				return resp, nil
			}
			return respond(req, 200, nil, `[6]`), nil
		})
		c := client(t, r, bottom, retry.Policy{Rand: constRand(0)})
		rows := 0
		t0, _ := r.underCaller(t, func(ctx context.Context) error {
			for p, err := range c.Pages(ctx, "items", nil, paginate.Options{}) {
				if err != nil {
					t.Fatal(err)
				}
				rows += p.Items.Len()
			}
			return nil
		})
		if rows != 6 {
			t.Fatalf("walked %d rows, want 6", rows)
		}
		const tail = " server.address=api.example.gov server.port=443 url.full=https://api.example.gov/items"
		diff(t, "spans", r.spanText(t0), []string{
			"GET client parent=caller +0s..+10ms Unset {http.request.method=GET http.response.status_code=200" + tail + "}",
			"GET client parent=caller +10ms..+20ms Error {error.type=503 http.request.method=GET http.response.status_code=503" + tail + "?page=2}" +
				" steady.wait@+20ms{steady.wait.duration=0.5 steady.wait.reason=backoff}",
			"GET client parent=caller +520ms..+530ms Unset {http.request.method=GET http.request.resend_count=1 http.response.status_code=200" + tail + "?page=2}",
			"GET client parent=caller +530ms..+540ms Unset {http.request.method=GET http.response.status_code=200" + tail + "?page=3}",
			"caller internal parent=- +0s..+540ms Unset {}",
		})
		r.sameTrace(t)
		diff(t, "metrics", r.metricText(t), []string{
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=false} = 3",
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=true} = 1",
			"steady.resends{error.type=503 server.address=api.example.gov steady.wait.reason=backoff} = 1",
			"steady.wait.duration{server.address=api.example.gov steady.wait.reason=backoff} count=1 sum=0.5",
			"steady.walk.pages{server.address=api.example.gov} = 3",
			"steady.walk.rows{server.address=api.example.gov} = 6",
		})
	})
}

// TestFanOut: three sub-requests, the second answering 500 once (a fan-out
// re-sends any 5xx): four spans, all under the caller's span in one trace.
// The items run concurrently, so the spans are compared without their
// times and in sorted order.
func TestFanOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		var failed atomic.Bool
		bottom := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			time.Sleep(10 * time.Millisecond)
			if req.URL.Path == "/items/1" && failed.CompareAndSwap(false, true) {
				return respond(req, 500, nil, ""), nil
			}
			return respond(req, 200, nil, `{}`), nil
		})
		c := client(t, r, bottom, retry.Policy{Rand: constRand(0)})
		t0, err := r.underCaller(t, func(ctx context.Context) error {
			return c.FanOut(ctx, 3, func(ctx context.Context, i int) error {
				return c.GetJSON(ctx, "items/"+strconv.Itoa(i), nil, new(any))
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		times := regexp.MustCompile(` \+[^ ]+\.\.\+[^ ]+ `)
		var got []string
		for _, line := range r.spanText(t0) {
			got = append(got, times.ReplaceAllString(line, " "))
		}
		slices.Sort(got)
		const tail = " server.address=api.example.gov server.port=443 url.full=https://api.example.gov/items/"
		diff(t, "spans", got, []string{
			"GET client parent=caller Error {error.type=500 http.request.method=GET http.response.status_code=500" + tail + "1}" +
				" steady.wait@+10ms{steady.wait.duration=0.5 steady.wait.reason=backoff}",
			"GET client parent=caller Unset {http.request.method=GET http.request.resend_count=1 http.response.status_code=200" + tail + "1}",
			"GET client parent=caller Unset {http.request.method=GET http.response.status_code=200" + tail + "0}",
			"GET client parent=caller Unset {http.request.method=GET http.response.status_code=200" + tail + "2}",
			"caller internal parent=- Unset {}",
		})
		r.sameTrace(t)
		m := strings.Join(r.metricText(t), "\n")
		for _, want := range []string{
			"steady.fanout.subrequests{} = 3",
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=false} = 3",
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=true} = 1",
			"steady.resends{error.type=500 server.address=api.example.gov steady.wait.reason=backoff} = 1",
		} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %q:\n%s", want, m)
			}
		}
	})
}

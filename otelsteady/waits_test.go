package otelsteady_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/budget"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// TestPacingHold: a response says the quota is spent for 2s; the next
// request is held before its attempt, so the hold is an event of the
// request's span (the caller's here), and the quota an event of the
// attempt that announced it. A lone held request waits the reset itself:
// no jitter (ADR 0160).
func TestPacingHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		bottom := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp := respond(req, 200, nil, "{}")
			resp.Header.Set("RateLimit", `"default";r=0;t=2`)
			return resp, nil
		})
		c := client(t, r, bottom, retry.Policy{Pacer: new(ratelimit.Pacer), Rand: constRand(0.5)})
		t0, _ := r.underCaller(t, func(ctx context.Context) error {
			for range 2 {
				if err := c.GetJSON(ctx, "items", nil, new(any)); err != nil {
					t.Fatal(err)
				}
			}
			return nil
		})
		const tail = " server.address=api.example.gov server.port=443 url.full=https://api.example.gov/items}"
		quota := " steady.quota@+%s{steady.quota.remaining=0 steady.quota.reset=2}"
		diff(t, "spans", r.spanText(t0), []string{
			"GET client parent=caller +0s..+0s Unset {http.request.method=GET http.response.status_code=200" + tail + fmt.Sprintf(quota, "0s"),
			"GET client parent=caller +2s..+2s Unset {http.request.method=GET http.response.status_code=200" + tail + fmt.Sprintf(quota, "2s"),
			"caller internal parent=- +0s..+2s Unset {} steady.wait@+0s{steady.wait.duration=2 steady.wait.reason=pacing}",
		})
		diff(t, "metrics", r.metricText(t), []string{
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=false} = 2",
			"steady.pacing.holds{server.address=api.example.gov} = 1",
			"steady.wait.duration{server.address=api.example.gov steady.wait.reason=pacing} count=1 sum=2",
		})
	})
}

// TestBudgetRefusal: a shared budget with nothing banked refuses the first
// re-send; the attempt's span ends with the stop, and the refusal is
// counted.
func TestBudgetRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		t0, err := r.getItems(t, &scripted{codes: []int{503}}, retry.Policy{Budget: &budget.Budget{MinPerSecond: -1, MaxTokens: 0.01}})
		if err == nil {
			t.Fatal("a refused re-send returned no error")
		}
		diff(t, "spans", r.spanText(t0), []string{
			"GET client parent=caller +0s..+0s Error {error.type=503 http.request.method=GET http.response.status_code=503" +
				" server.address=api.example.gov server.port=443 url.full=https://api.example.gov/items} steady.stop@+0s{steady.stop.reason=budget}",
			"caller internal parent=- +0s..+0s Unset {}",
		})
		diff(t, "metrics", r.metricText(t), []string{
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=false} = 1",
			"steady.budget.refusals{server.address=api.example.gov} = 1",
			"steady.stops{server.address=api.example.gov steady.stop.reason=budget} = 1",
		})
	})
}

// TestServerHintThenExhausted: a 429 whose Retry-After is under the cap is
// slept off (a server_hint wait, with its jitter of a tenth of the hint at
// most: 2.1s at Rand 0.5), and the attempts then
// run out: the stop is on the last attempt's span.
func TestServerHintThenExhausted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		t0, err := r.getItems(t, &scripted{codes: []int{429, 503}, header: http.Header{"Retry-After": {"2"}}},
			retry.Policy{MaxAttempts: 2, Rand: constRand(0.5)})
		if !errors.Is(err, retry.ErrExhausted) {
			t.Fatalf("err = %v, want ErrExhausted", err)
		}
		const tail = " server.address=api.example.gov server.port=443 url.full=https://api.example.gov/items}"
		diff(t, "spans", r.spanText(t0), []string{
			"GET client parent=caller +0s..+0s Error {error.type=429 http.request.method=GET http.response.status_code=429" + tail +
				" steady.wait@+0s{steady.wait.duration=2.1 steady.wait.reason=server_hint}",
			"GET client parent=caller +2.1s..+2.1s Error {error.type=503 http.request.method=GET http.request.resend_count=1 http.response.status_code=503" + tail +
				" steady.stop@+2.1s{steady.stop.reason=exhausted steady.wait.duration=2}",
			"caller internal parent=- +0s..+2.1s Unset {}",
		})
		diff(t, "metrics", r.metricText(t), []string{
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=false} = 1",
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=true} = 1",
			// A 429 without quota fields halves the host's limit (AIMD).
			"steady.breaker.changes{server.address=api.example.gov steady.breaker.state=limit} = 1",
			"steady.resends{error.type=429 server.address=api.example.gov steady.wait.reason=server_hint} = 1",
			"steady.stops{server.address=api.example.gov steady.stop.reason=exhausted} = 1",
			"steady.wait.duration{server.address=api.example.gov steady.wait.reason=server_hint} count=1 sum=2.1",
		})
	})
}

// TestCanceledDuringBackoff: the caller gives up while a re-send waits.
// The stop comes between attempts, so it is an event of the caller's span,
// which the adapter leaves for the caller to end.
func TestCanceledDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		c := client(t, r, &scripted{codes: []int{503}}, retry.Policy{InitialBackoff: 10 * time.Second, Rand: constRand(0.5)})
		t0, err := r.underCaller(t, func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(time.Second, cancel)
			err := c.GetJSON(ctx, "items", nil, new(any))
			// The caller's span ends well after the stop it was told.
			time.Sleep(time.Minute)
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		diff(t, "spans", r.spanText(t0), []string{
			"GET client parent=caller +0s..+0s Error {error.type=503 http.request.method=GET http.response.status_code=503" +
				" server.address=api.example.gov server.port=443 url.full=https://api.example.gov/items}" +
				" steady.wait@+0s{steady.wait.duration=5 steady.wait.reason=backoff}",
			"caller internal parent=- +0s..+1m1s Unset {} steady.stop@+1s{steady.stop.reason=canceled}",
		})
	})
}

// TestBreakerOpens: the call whose failure opens the host's circuit keeps
// its 503; the change is counted by its new state; the next call fails
// fast, its stop (circuit_open) on the caller's span, with no attempt.
func TestBreakerOpens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		c, err := steady.New(steady.Options{BaseURL: base, Keys: []credentials.Key{apiKey}, Reporter: r.adapter,
			Transport: &scripted{codes: []int{503}}, Policy: retry.Policy{MaxAttempts: 1},
			Overload: breaker.Config{MinRequests: 1}})
		if err != nil {
			t.Fatal(err)
		}
		t0, _ := r.underCaller(t, func(ctx context.Context) error {
			c.GetJSON(ctx, "items", nil, new(any))
			if err := c.GetJSON(ctx, "items", nil, new(any)); !errors.Is(err, breaker.ErrOpen) {
				t.Errorf("second call: %v, want ErrOpen", err)
			}
			return nil
		})
		diff(t, "spans", r.spanText(t0), []string{
			"GET client parent=caller +0s..+0s Error {error.type=503 http.request.method=GET http.response.status_code=503" +
				" server.address=api.example.gov server.port=443 url.full=https://api.example.gov/items} steady.stop@+0s{steady.stop.reason=exhausted}",
			"caller internal parent=- +0s..+0s Unset {} steady.stop@+0s{steady.stop.reason=circuit_open}",
		})
		diff(t, "metrics", r.metricText(t), []string{
			"steady.attempts{http.request.method=GET server.address=api.example.gov steady.resend=false} = 1",
			"steady.breaker.changes{server.address=api.example.gov steady.breaker.state=open} = 1",
			"steady.stops{server.address=api.example.gov steady.stop.reason=circuit_open} = 1",
			"steady.stops{server.address=api.example.gov steady.stop.reason=exhausted} = 1",
		})
	})
}

// TestParkOnTheRunsSpan: a harvest that parks until a quota's reset says
// so on the span of its context, the run's, with how it continues.
func TestParkOnTheRunsSpan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		t0, _ := r.underCaller(t, func(ctx context.Context) error {
			r.adapter.Report(event.Event{Kind: event.Parked, Time: time.Now(), Context: ctx, Reason: event.ParkExit, Wait: 90 * time.Second})
			return nil
		})
		diff(t, "spans", r.spanText(t0), []string{
			"caller internal parent=- +0s..+0s Unset {} steady.park@+0s{steady.park.mode=exit steady.wait.duration=90}",
		})
	})
}

package render_test

import (
	"bytes"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/event"
)

func TestTallyCounts(t *testing.T) {
	var tally render.Tally
	for _, e := range []event.Event{
		{Kind: event.RequestStarted},
		{Kind: event.RetryScheduled, Wait: 1200 * time.Millisecond, Reason: event.WaitBackoff},
		{Kind: event.RetryScheduled, Wait: 1000 * time.Millisecond, Reason: event.WaitBackoff},
		{Kind: event.RetryScheduled, Wait: 12 * time.Second, Reason: event.WaitRateLimited},
		{Kind: event.RequestFinished, Status: 200},
		{Kind: event.RequestStarted},
		{Kind: event.Waiting, Wait: 3 * time.Second, Reason: event.WaitRateLimited},
		{Kind: event.Waiting, Wait: 500 * time.Millisecond},
		{Kind: event.Waiting, Wait: -time.Second, Reason: event.WaitBackoff}, // a negative wait counts as none
		{Kind: event.PageReceived, Items: 100, Bytes: 20_000},
		{Kind: event.PageReceived, Items: 50, Bytes: 9_000},
		{Kind: event.SubrequestDone, Done: 1, Total: 2},
		{Kind: event.Stopped, Reason: "stalled"},
		{Kind: event.RequestStarted},
		{Kind: event.Stopped, Reason: "attempts exhausted", Status: 503},
		{Kind: event.QuotaSeen, Remaining: 3},
	} {
		tally.Report(e)
	}
	got := tally.Counts()
	want := render.Counts{
		Requests:        3,
		Finished:        1,
		Retries:         3,
		RetriesByReason: map[string]int{"backoff": 2, "rate limited": 1},
		Waited:          17700 * time.Millisecond,
		WaitedByReason:  map[string]time.Duration{"backoff": 2200 * time.Millisecond, "rate limited": 15 * time.Second, "other": 500 * time.Millisecond},
		Pages:           2,
		Items:           150,
		Bytes:           29_000,
		Subrequests:     1,
		Stops:           2,
		StopsByReason:   map[string]int{"stalled": 1, "attempts exhausted": 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Counts:\n got %+v\nwant %+v", got, want)
	}
	if got.Attempts() != 6 {
		t.Errorf("Attempts = %d, want 6 (3 first attempts + 3 retries)", got.Attempts())
	}

	// Counts is a copy: changing it does not change the tally.
	got.RetriesByReason["backoff"] = 99
	if tally.Counts().RetriesByReason["backoff"] != 2 {
		t.Error("Counts shares its maps with the tally")
	}

	var buf bytes.Buffer
	if err := tally.WriteSummary(&buf); err != nil {
		t.Fatal(err)
	}
	equalLines(t, buf.String(), []string{
		"requests      3",
		"attempts      6",
		"retries       3      backoff 2, rate limited 1",
		"waited        17.7s  backoff 2.2s, other 500ms, rate limited 15s",
		"sub-requests  1",
		"pages         2",
		"rows          150",
		"bytes         29 kB",
		"stopped       2      attempts exhausted 1, stalled 1",
	})
}

func TestTallyZeroSummary(t *testing.T) {
	var tally render.Tally
	var buf bytes.Buffer
	if err := tally.WriteSummary(&buf); err != nil {
		t.Fatal(err)
	}
	equalLines(t, buf.String(), []string{
		"requests  0",
		"attempts  0",
		"retries   0",
		"waited    0s",
		"pages     0",
		"rows      0",
		"bytes     0 B",
		"stopped   0",
	})
}

func TestTallyConcurrent(t *testing.T) {
	var tally render.Tally
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				tally.Report(event.Event{Kind: event.RetryScheduled, Wait: time.Millisecond, Reason: event.WaitBackoff})
				tally.Report(event.Event{Kind: event.PageReceived, Items: 2, Bytes: 3})
			}
		})
	}
	wg.Wait()
	c := tally.Counts()
	if c.Retries != 8000 || c.RetriesByReason["backoff"] != 8000 || c.Waited != 8*time.Second ||
		c.Pages != 8000 || c.Items != 16000 || c.Bytes != 24000 {
		t.Errorf("after 8×1000 concurrent reports: %+v", c)
	}
}

func TestMultiWithTally(t *testing.T) {
	var tally render.Tally
	var buf bytes.Buffer
	p := render.NewPlain(&buf, render.Options{})
	r := event.Multi(&tally, nil, p)
	event.Emit(r, event.Event{Kind: event.Stopped, Time: t0, Host: "h", Reason: "stalled"})
	p.Close()
	if tally.Counts().Stops != 1 || buf.String() != "stopped h: stalled\nprogress: 1 stopped\n" {
		t.Errorf("tally %+v, plain %q", tally.Counts(), buf.String())
	}
}

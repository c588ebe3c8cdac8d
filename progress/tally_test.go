package progress_test

import (
	"bytes"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/steadyhttp/steady/progress"
)

func TestTallyCounts(t *testing.T) {
	var tally progress.Tally
	for _, e := range []progress.Event{
		{Kind: progress.RequestStarted},
		{Kind: progress.RetryScheduled, Wait: 1200 * time.Millisecond, Reason: progress.WaitBackoff},
		{Kind: progress.RetryScheduled, Wait: 1000 * time.Millisecond, Reason: progress.WaitBackoff},
		{Kind: progress.RetryScheduled, Wait: 12 * time.Second, Reason: progress.WaitRateLimited},
		{Kind: progress.RequestFinished, Status: 200},
		{Kind: progress.RequestStarted},
		{Kind: progress.Waiting, Wait: 3 * time.Second, Reason: progress.WaitRateLimited},
		{Kind: progress.Waiting, Wait: 500 * time.Millisecond},
		{Kind: progress.Waiting, Wait: -time.Second, Reason: progress.WaitBackoff}, // a negative wait counts as none
		{Kind: progress.PageReceived, Items: 100, Bytes: 20_000},
		{Kind: progress.PageReceived, Items: 50, Bytes: 9_000},
		{Kind: progress.SubrequestDone, Done: 1, Total: 2},
		{Kind: progress.Stopped, Reason: "stalled"},
		{Kind: progress.RequestStarted},
		{Kind: progress.Stopped, Reason: "attempts exhausted", Status: 503},
		{Kind: progress.QuotaSeen, Remaining: 3},
	} {
		tally.Report(e)
	}
	got := tally.Counts()
	want := progress.Counts{
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
	var tally progress.Tally
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
	var tally progress.Tally
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				tally.Report(progress.Event{Kind: progress.RetryScheduled, Wait: time.Millisecond, Reason: progress.WaitBackoff})
				tally.Report(progress.Event{Kind: progress.PageReceived, Items: 2, Bytes: 3})
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
	var tally progress.Tally
	var buf bytes.Buffer
	p := progress.NewPlain(&buf, progress.Options{})
	r := progress.Multi(&tally, nil, p)
	progress.Emit(r, progress.Event{Kind: progress.Stopped, Time: t0, Host: "h", Reason: "stalled"})
	p.Close()
	if tally.Counts().Stops != 1 || buf.String() != "stopped h: stalled\nprogress: 1 stopped\n" {
		t.Errorf("tally %+v, plain %q", tally.Counts(), buf.String())
	}
}

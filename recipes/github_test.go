package recipes_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/retry"
)

const githubToken = "ghp_fakeT0kenForTheRecipeTest0000000000"

// listAllIssues walks the issues of golang/go rounds times, page by page
// as go-github's callers do, and checks every issue arrived once a round.
func listAllIssues(ctx context.Context, t *testing.T, gh *github.Client, rounds int) {
	t.Helper()
	for round := range rounds {
		seen := 0
		opt := &github.IssueListByRepoOptions{}
		for {
			issues, resp, err := gh.Issues.ListByRepo(ctx, "golang", "go", opt)
			if err != nil {
				t.Fatalf("round %d, page %d: %v", round, opt.ListOptions.Page, err)
			}
			for _, is := range issues {
				seen++
				if is.GetNumber() != seen {
					t.Fatalf("round %d: issue %d where %d was due", round, is.GetNumber(), seen)
				}
			}
			if resp.NextPage == 0 {
				break
			}
			opt.ListOptions.Page = resp.NextPage
		}
		if seen != issuesPerPage*issuePages {
			t.Fatalf("round %d: %d issues, want %d", round, seen, issuesPerPage*issuePages)
		}
	}
}

// checkGitHubLog checks what the fake saw: the one scripted secondary
// limit and no refusal after it, every cut body re-sent, and no request
// sent before the wait a previous answer announced had passed.
func checkGitHubLog(t *testing.T, f *fakeGitHub, log []arrival) {
	t.Helper()
	count := map[string]int{}
	for i, a := range log {
		count[a.why]++
		if a.why == "cut" && (i+1 == len(log) || log[i+1].path != a.path) {
			t.Errorf("request %d (%s) was cut and not re-sent", a.n, a.path)
		}
		if i > 0 {
			prev := log[i-1]
			if prev.left == 0 && prev.status == http.StatusOK && a.at.Before(prev.reset) {
				t.Errorf("request %d sent %v before the reset request %d announced", a.n, prev.reset.Sub(a.at), prev.n)
			}
		}
	}
	if count["secondary"] != 1 || count["too soon"] != 0 || count["primary"] != 0 || count["unauthorized"] != 0 {
		t.Errorf("the fake answered %v; want the one scripted secondary limit and no other refusal", count)
	}
	spentCut := 0
	for _, a := range log {
		if a.why == "cut" && a.left == 0 {
			spentCut++
		}
	}
	if count["cut"] < len(f.cut) || spentCut == 0 {
		t.Errorf("%d bodies cut, %d of them spending the quota; want the %d chosen and one that spent it", count["cut"], spentCut, len(f.cut))
	}
	if count[""] < 1+3*issuePages {
		t.Errorf("%d requests answered in full", count[""])
	}
}

func newFakeGitHub(limit int, window time.Duration, retry int) *fakeGitHub {
	return &fakeGitHub{token: githubToken, limit: limit, window: window, secondary: 4, retry: retry,
		cut: map[int]bool{2: true, 7: true, 13: true}, cutSpent: true}
}

// The recipe over a real TLS socket on 127.0.0.1: a quota of 6 a second
// (GitHub's resets are whole seconds), a secondary limit of 1 s, three cut
// bodies. Every call succeeds, and the fake refused nothing but the
// scripted 403: the pacing held each request past the reset and the
// Retry-After.
func TestGitHubRecipe(t *testing.T) {
	f := newFakeGitHub(6, time.Second, 1)
	_, tr := tlsServer(t, f, nil)
	wiretest.For(t).Key(credentials.Key{Header: "Authorization", Value: "Bearer " + githubToken, Hosts: []string{"api.github.com"}})
	var gh *github.Client
	ctx := context.Background()
	if err := githubRecipe(ctx, steady.Options{Transport: tr}, githubToken, &gh); err != nil {
		t.Fatal(err)
	}
	listAllIssues(ctx, t, gh, 3)
	checkGitHubLog(t, f, f.log())
	// A repository moved to another host: go-github follows the redirect
	// through steady, and the token stays behind.
	repo, _, err := gh.Repositories.Get(ctx, "golang", "moved")
	if err != nil || repo.GetFullName() != "golang/go" {
		t.Fatalf("Get of a moved repository: %v, %v", repo, err)
	}
	f.mu.Lock()
	foreign := f.foreign
	f.mu.Unlock()
	if len(foreign) != 1 || foreign[0] != "" {
		t.Errorf("the other host received %d requests with Authorization %q; want one, without", len(foreign), foreign)
	}
}

// The same recipe in virtual time, over an in-memory TLS connection: a
// quota of 5 a window of 20 s and a secondary limit of 7 s. Each request
// after a spent quota arrives at the reset, and the one after the
// secondary limit at its Retry-After, no earlier and no later than the
// jitter the transport may add (a tenth of the wait, at most 1 s).
func TestGitHubRecipePacesAsTheHeadersSay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeGitHub(5, 20*time.Second, 7)
		_, tr := tlsServer(t, f, newPipeListener())
		var gh *github.Client
		ctx := context.Background()
		if err := githubRecipe(ctx, steady.Options{Transport: tr}, githubToken, &gh); err != nil {
			t.Fatal(err)
		}
		listAllIssues(ctx, t, gh, 3)
		log := f.log()
		checkGitHubLog(t, f, log)
		held := 0
		for i, a := range log[1:] {
			prev := log[i]
			var wait time.Duration
			switch {
			case prev.why == "secondary":
				wait = prev.wait
			case prev.left == 0 && prev.status == http.StatusOK:
				wait = prev.reset.Sub(prev.at)
			default:
				continue
			}
			held++
			if got := a.at.Sub(prev.at); got < wait || got > wait+min(wait/10, time.Second) {
				t.Errorf("request %d sent %v after request %d, which announced a wait of %v", a.n, got, prev.n, wait)
			}
		}
		if held < 3 {
			t.Errorf("%d waits checked; the quota was not spent", held)
		}
		tr.CloseIdleConnections()
	})
}

// Without the recipe's DisableRateLimitCheck, go-github refuses on its own
// once an answer said remaining=0: the call fails without a request,
// though steady would have waited for the reset.
func TestGitHubWithoutTheRecipeRefusesItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeGitHub{token: githubToken, limit: 2, window: 20 * time.Second}
		_, tr := tlsServer(t, f, newPipeListener())
		c, err := steady.New(steady.Options{Transport: tr, Keys: []credentials.Key{
			{Header: "Authorization", Value: "Bearer " + githubToken, Hosts: []string{"api.github.com"}}}})
		if err != nil {
			t.Fatal(err)
		}
		gh := github.NewClient(c.HTTP())
		ctx := context.Background()
		for range 2 {
			if _, _, err := gh.Repositories.ListByOrg(ctx, "golang", nil); err != nil {
				t.Fatal(err)
			}
		}
		_, _, err = gh.Repositories.ListByOrg(ctx, "golang", nil)
		var rl *github.RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("third call: %v; want go-github's own *RateLimitError", err)
		}
		if n := len(f.log()); n != 2 {
			t.Errorf("the fake saw %d requests; go-github refused without sending", n)
		}
		tr.CloseIdleConnections()
	})
}

// GitHub's primary window is an hour. Once an answer said the quota is
// spent until a reset beyond Policy.MaxRetryAfter (60 s), the recipe's
// next call ends at once, without a request, with an error matching
// retry.ErrRateLimited, as the README says. A client with MaxRetryAfter
// raised to the hour, new to the spent quota, draws its 403, waits the
// hour it names and succeeds; its next call waits for the next reset. A
// default client new to the spent quota gets the 403 back at once, as
// go-github's *RateLimitError.
func TestGitHubRecipeHourlyWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeGitHub{token: githubToken, limit: 1, window: time.Hour}
		_, tr := tlsServer(t, f, newPipeListener())
		ctx := context.Background()
		var gh *github.Client
		if err := githubRecipe(ctx, steady.Options{Transport: tr}, githubToken, &gh); err != nil {
			t.Fatal(err)
		}
		_, _, err := gh.Repositories.ListByOrg(ctx, "golang", nil)
		if !errors.Is(err, retry.ErrRateLimited) {
			t.Fatalf("second call: %v; want an error matching retry.ErrRateLimited", err)
		}
		if n := len(f.log()); n != 1 {
			t.Errorf("the fake saw %d requests; the refused call must send none", n)
		}
		// A new client does not know the quota is spent: its 403, naming
		// a reset beyond MaxRetryAfter, comes back to go-github at once.
		var fresh *github.Client
		err = githubRecipe(ctx, steady.Options{Transport: tr}, githubToken, &fresh)
		var rl *github.RateLimitError
		if !errors.As(err, &rl) {
			t.Fatalf("a new client's call: %v; want go-github's *RateLimitError", err)
		}
		tr.CloseIdleConnections()

		start := time.Now()
		if err := githubRecipe(ctx, steady.Options{Transport: tr, Policy: retry.Policy{MaxRetryAfter: time.Hour}}, githubToken, &gh); err != nil {
			t.Fatal(err)
		}
		if _, _, err := gh.Repositories.ListByOrg(ctx, "golang", nil); err != nil {
			t.Fatalf("with MaxRetryAfter an hour: %v", err)
		}
		log := f.log()[1:] // after the first call: the new client's 403, then the raised one's
		if len(log) != 4 || log[1].why != "primary" || log[2].why != "" || log[3].why != "" {
			t.Fatalf("the fake saw %+v; want the first call, one 403 drawn by the new client, then two answers", log)
		}
		for i, want := range []time.Duration{time.Hour, 2 * time.Hour} {
			if got := log[i+2].at.Sub(start); got < want || got > want+time.Second {
				t.Errorf("request %d sent %v after the 403, want %v (a reset on the hour)", log[i+2].n, got, want)
			}
		}
		tr.CloseIdleConnections()
	})
}

// A secondary limit whose Retry-After is beyond Policy.MaxRetryAfter is not
// slept off: the recipe's call gets the 403 back at once, as go-github's
// *AbuseRateLimitError carrying the wait, for the caller to serve (the
// README says so: with DisableRateLimitCheck go-github no longer refuses
// the calls after it by itself).
func TestGitHubRecipeLongSecondaryLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeGitHub{token: githubToken, limit: 100, window: time.Hour, secondary: 1, retry: 120}
		_, tr := tlsServer(t, f, newPipeListener())
		var gh *github.Client
		start := time.Now()
		err := githubRecipe(context.Background(), steady.Options{Transport: tr}, githubToken, &gh)
		var abuse *github.AbuseRateLimitError
		if !errors.As(err, &abuse) || abuse.GetRetryAfter() != 120*time.Second {
			t.Fatalf("a secondary limit of 120 s: %v; want go-github's *AbuseRateLimitError with its wait", err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("the call returned after %v; a wait beyond MaxRetryAfter is not slept", waited)
		}
		if n := len(f.log()); n != 1 {
			t.Errorf("the fake saw %d requests, want 1", n)
		}
		tr.CloseIdleConnections()
	})
}

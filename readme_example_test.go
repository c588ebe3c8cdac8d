package steady_test

// The README's Go snippets, each verbatim inside a function that gives it
// what it names, so that every snippet compiles; TestREADMESnippetsAreHeld
// checks that each one still stands here as the README shows it.

import (
	"context"
	"errors"
	"log"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/chunk"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/resume"
	"github.com/steadyhttp/steady/retry"
	"github.com/steadyhttp/steady/steadytest"
)

type (
	Item struct{ ID int }
	Site struct{ ID string }
)

func readmeTransport() (*http.Response, error) {
	client := &http.Client{Transport: resume.New(retry.New(nil, retry.Policy{}))}
	resp, err := client.Get("https://api.example.gov/v1/items/42")
	return resp, err
}

func readmeFacade(ctx context.Context) error {
	c, err := steady.FromEnv("", steady.Options{ // STEADY_RETRIES, STEADY_API_KEY, ...
		BaseURL: "https://api.example.gov/v1/",
		Keys:    []credentials.Key{{Header: "X-Api-Key", Hosts: []string{"api.example.gov"}}},
	})
	if err != nil {
		return err
	}
	var item Item
	err = c.GetJSON(ctx, "items/42", nil, &item)
	var rl *steady.RateLimitError
	if errors.As(err, &rl) {
		log.Printf("rate limited; the server asked for %v", rl.RetryAfter())
	}
	return err
}

func readmeWalk(ctx context.Context, c *steady.Client) error {
	var rows int
	walk, err := c.Walk("collections/x/items", url.Values{"limit": {"500"}},
		paginate.Options{Next: paginate.JSONLinks, Items: "features"})
	if err != nil {
		return err
	}
	for page, err := range walk.All(ctx) {
		if err != nil {
			return err // every earlier page was delivered; walk.Summary().Next says where to resume
		}
		rows += page.Items.Len()
	}
	log.Printf("%d rows", rows)
	return nil
}

func readmeFanOut(ctx context.Context, c *steady.Client, siteIDs []string) error {
	base, _ := url.Parse("https://api.example.gov/v1/sites")
	parts, err := chunk.Plan(base, "ids", siteIDs, 0) // fewest URLs of at most 8,000 bytes
	if err != nil {
		return err
	}
	sites, err := steady.FanOut(ctx, c, parts, fanout.Options{},
		func(ctx context.Context, u *url.URL) ([]Site, error) {
			var s []Site
			return s, c.GetJSON(ctx, u.String(), nil, &s)
		})
	if in, ok := fanout.AsInterruption(err); ok {
		// quota ran out: keep the completed parts, resume the rest after in.RetryAfter()
		_ = in
	}
	log.Printf("%d parts", len(sites))
	return err
}

func readmeTestServer() {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 5000, Faults: steadytest.Harsh(1)})
	defer srv.Close()
	// point your client at srv.URL + "/items"; srv.Requests() logs what arrived
}

var _ = []any{readmeTransport, readmeFacade, readmeWalk, readmeFanOut, readmeTestServer}

// TestREADMESnippetsAreHeld: every Go snippet of the README stands, line
// for line (indentation aside), in a file that compiles with the tests, so
// a snippet that stops compiling, or is edited without its holder, fails.
func TestREADMESnippetsAreHeld(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var held strings.Builder
	for _, f := range []string{"readme_example_test.go", filepath.Join("otelsteady", "readme_example_test.go"),
		filepath.Join("recipes", "readme_example_test.go")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		held.WriteString(normalizeSnippet(string(b)))
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d Go snippets in the README; the test is not reading it", len(blocks))
	}
	for _, b := range blocks {
		if !strings.Contains(held.String(), normalizeSnippet(b[1])) {
			t.Errorf("this README snippet is not held verbatim by an example test:\n%s", b[1])
		}
	}
}

// normalizeSnippet drops each line's indentation and the blank lines.
func normalizeSnippet(s string) string {
	var out strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out.WriteString(line + "\n")
		}
	}
	return out.String()
}

package recipes_test

// The README's recipes ("Wrap any client's transport"), each verbatim
// inside a function that gives it what it names; the core module's
// TestREADMESnippetsAreHeld checks that each still stands here as the
// README shows it, and the tests of this module run them.

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-github/v84/github"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/credentials"
)

// githubRecipe is the go-github recipe: opt is what the caller configures
// (the tests give its Transport to the fake); out receives the client.
func githubRecipe(ctx context.Context, opt steady.Options, token string, out **github.Client) error {
	opt.Keys = []credentials.Key{{Header: "Authorization", Value: "Bearer " + token, Hosts: []string{"api.github.com"}}}
	c, err := steady.New(opt) // the token goes to api.github.com only, on every hop
	if err != nil {
		return err
	}
	gh := github.NewClient(c.HTTP())
	gh.DisableRateLimitCheck = true // steady waits for x-ratelimit-reset; go-github alone refuses at remaining=0
	repos, _, err := gh.Repositories.ListByOrg(ctx, "golang", nil)
	*out = gh
	if err == nil && len(repos) != 2 {
		err = errors.New("ListByOrg: not the fake's two repositories")
	}
	return err
}

// s3Recipe is the AWS SDK recipe: cfg and c are what the caller made; more
// holds the test's own options (path-style buckets for versitygw).
func s3Recipe(cfg aws.Config, c *steady.Client, more ...func(*s3.Options)) *s3.Client {
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.HTTPClient = c.HTTP()      // steady re-sends, paces and continues bodies
		o.Retryer = aws.NopRetryer{} // and the SDK does not retry on top of it
	})
	return s3.New(s3c.Options(), more...)
}

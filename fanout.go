package steady

import (
	"context"

	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/retry"
)

// FanOut runs fetch for every item with c's concurrency bound and returns the
// results in input order; see [fanout.Run] for failure precedence, resume and
// Options.Independent. Zero fields of opt take the client's values: its gate
// (shared by every fan-out of the client), its concurrency and its reporter.
// Sub-requests re-send any 5xx ([retry.AnyServerError]) unless the client's
// policy names its own status set: in a fan-out a 500 is an upstream hiccup.
func FanOut[T, R any](ctx context.Context, c *Client, items []T, opt fanout.Options, fetch func(ctx context.Context, item T) (R, error)) ([]R, error) {
	if opt.Gate == nil && opt.Concurrency == 0 {
		opt.Gate, opt.Concurrency = c.gate, c.opt.Concurrency
	}
	if opt.Reporter == nil {
		opt.Reporter = c.opt.Reporter
	}
	opt.Reporter = redactReporter(opt.Reporter, c.red)
	opt.Secrets = append(opt.Secrets, keyValues(c.opt.Keys)...)
	ctx = retry.WithOverride(ctx, func(p *retry.Policy) {
		if p.RetryStatus == nil {
			p.RetryStatus = retry.AnyServerError
		}
	})
	return fanout.Run(ctx, items, opt, fetch)
}

// FanOut runs fetch for the indexes 0..n-1 as [FanOut] does, for callers
// that keep their own results: fetch stores what it got at index i.
func (c *Client) FanOut(ctx context.Context, n int, fetch func(ctx context.Context, i int) error) error {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	_, err := FanOut(ctx, c, idx, fanout.Options{}, func(ctx context.Context, i int) (struct{}, error) {
		return struct{}{}, fetch(ctx, i)
	})
	return err
}

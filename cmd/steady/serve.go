package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady/steadytest"
)

func newServe(g *globals) *cobra.Command {
	var (
		addr, faults, style string
		rows, limit, maxLim int
		seed                uint64
		key                 string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the flaky API standalone, to test other clients against it",
		Long: `serve runs the same flaky API that demo harvests, on an address of your
choosing, until interrupted. The collection is at /items; /lookup?ids=a,b
answers one row per id and 414 above 8,000 bytes of URL, for chunking.
The same seed gives the same faults on the same requests.`,
		Example: `  steady serve
  steady serve --addr 127.0.0.1:9000 --faults mild --style json-links
  steady serve --rows 5000 --faults none --require-key s3cret`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mix, err := steadytest.Preset(faults, seed)
			if err != nil {
				return &usageError{err: err}
			}
			st, err := steadytest.ParseStyle(style)
			if err != nil {
				return &usageError{err: err}
			}
			opt := steadytest.ServerOptions{Rows: rows, Style: st, Faults: mix, DefaultLimit: limit,
				MaxLimit: maxLim, LogLimit: -1}
			if key != "" {
				opt.KeyValue, opt.KeyHeader, opt.RequireKey = key, "X-Api-Key", true
			}
			h, err := steadytest.NewHandler(opt)
			if err != nil {
				return &usageError{err: err}
			}
			defer h.Close()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usagef("cannot listen on %s: %v", addr, err)
			}
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(cmd.ErrOrStderr(), "serving %s at http://%s%s (faults: %s, seed %d, %s pages); interrupt to stop\n",
				plural(opt.Rows, "row", "rows"), ln.Addr(), steadytest.ItemsPath, faults, seed, st)
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ln) }()
			select {
			case err := <-done:
				return err
			case <-cmd.Context().Done():
			}
			h.Close()
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(shut); err != nil {
				srv.Close()
			}
			if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	f.IntVar(&rows, "rows", 100_000, "rows in the collection")
	f.StringVar(&faults, "faults", "mild", "fault mix: none, mild or harsh")
	f.Uint64Var(&seed, "seed", 1, "seed of the fault draw")
	f.StringVar(&style, "style", "link", "pagination style: link, json-links or cursor")
	f.IntVar(&limit, "limit", 100, "page size when the request has no limit parameter")
	f.IntVar(&maxLim, "max-limit", 1000, "largest page size served")
	f.StringVar(&key, "require-key", "", "answer 401 to requests without this key in X-Api-Key")
	completeValues(cmd, "faults", faultChoices...)
	completeValues(cmd, "style", styleChoices...)
	return cmd
}

package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/retry"
)

func newGet(g *globals) *cobra.Command {
	var (
		headers []string
		outPath string
		force   bool
	)
	cmd := &cobra.Command{
		Use:   "get URL",
		Short: "Fetch one URL through the whole stack",
		Long: `get sends one GET request through steady's stack (retry with a stall
budget, Retry-After, the API key scoped to the URL's host) and writes the
body to stdout or to a file. A final error status is reported on stderr
with the attempts made and why retrying stopped.`,
		Example: `  steady get https://api.example.gov/v1/status
  steady get https://api.example.gov/v1/items/42 -H 'Accept: application/json' -o item.json
  STEADY_API_KEY=... steady get https://api.example.gov/v1/me --key-header X-Api-Key`,
		Args: exactlyOneURL,
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := parseTarget(args[0])
			if err != nil {
				return err
			}
			req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, target.String(), nil)
			if err != nil {
				return usagef("invalid URL: %v", err)
			}
			for _, h := range headers {
				name, value, ok := strings.Cut(h, ":")
				name = strings.TrimSpace(name)
				if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
					return usagef("invalid header %q: want 'Name: value'", h)
				}
				req.Header.Add(name, strings.TrimSpace(value))
			}
			if outPath == "" {
				outPath = "-"
			}
			out, err := createOutput(outPath, force, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer out.abort()
			client, r, err := g.clientFor(target, retry.Policy{})
			if err != nil {
				return err
			}
			defer client.CloseIdleConnections()
			resp, err := client.Do(req)
			r.Close()
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if _, err := io.Copy(out, resp.Body); err != nil {
				return fmt.Errorf("reading the body of %s: %w", credentials.RedactURL(target), err)
			}
			return out.commit()
		},
	}
	cmd.Flags().StringArrayVarP(&headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	cmd.Flags().StringVarP(&outPath, "output", "o", "", "write the body to this file, complete or not at all (- for stdout; a FIFO or device is written in place)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing output file")
	return cmd
}

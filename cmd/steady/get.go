package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/retry"
)

func newGet(g *globals) *cobra.Command {
	var (
		headers []string
		outPath string
		force   bool
		resume  bool
		sumHex  string

		sharedQuota string
	)
	cmd := &cobra.Command{
		Use:   "get URL",
		Short: "Fetch one URL through the whole stack",
		Long: `get sends one GET request through steady's stack (retry with a stall
budget, Retry-After, the API key scoped to the URL's host) and writes the
body to stdout or to a file. Credential headers given with -H
(Authorization, Cookie, X-Api-Key and their kin) are scoped to the URL's
host like the API key, and every other -H header to the URL's origin: a
redirect elsewhere carries none of them, except the content-negotiation
headers Accept, Accept-Encoding, Accept-Language, Cache-Control,
If-Modified-Since, If-None-Match and User-Agent. A final
error status is reported on stderr with the attempts made and why retrying
stopped.

A body that breaks mid-way is continued with a Range request when the
server proves it is the same body (a strong ETag or Last-Modified); it is
never spliced from two different answers. With -o FILE the body goes to
FILE.partial, with its URL and validator in FILE.partial.json: a run that
is interrupted (exit 3) or killed continues from the partial's length when
the same command is run again (or with --resume), after checking that the
server still has the same body. FILE appears only when complete, and is
then checked for its length (and with --sha256 its hash). One run at a time
writes FILE: it holds a lock on FILE.lock, and a second run exits 2 (the
lock goes with a run that dies). A partial or record owned by another user,
or writable by others in a directory they can write, is refused.

Without -o, a body that looks binary (a Content-Type that is not text, or
a NUL byte in its first 2 KiB) is not written to a terminal: exit 2. Give
-o FILE, or -o - to write it to the terminal anyway.`,
		Example: `  steady get https://api.example.gov/v1/status
  steady get https://api.example.gov/v1/items/42 -H 'Accept: application/json' -o item.json
  steady get https://data.example.gov/dump.tar -o dump.tar --sha256 9f86d0...
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
			var handKeys []credentials.Key
			var scoped []string // -H names dropped on a redirect to another origin
			for _, h := range headers {
				name, value, ok := strings.Cut(h, ":")
				name = strings.TrimSpace(name)
				if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
					// The value is left out: it may be a secret.
					return usagef("invalid header %q: want 'Name: value'", credentials.Redact(h, strings.TrimSpace(value)))
				}
				if credentials.IsCredentialHeader(name) && strings.TrimSpace(value) != "" {
					// Scoped to the URL's host like STEADY_API_KEY, so no
					// redirect takes it elsewhere.
					if handKeys, err = g.addHandKey(handKeys, target, name, strings.TrimSpace(value)); err != nil {
						return err
					}
					continue
				}
				req.Header.Add(name, strings.TrimSpace(value))
				if !isNegotiation(name) {
					scoped = append(scoped, name)
				}
			}
			if req.Header.Get("Range") != "" || req.Header.Get("If-Range") != "" {
				return usagef("-H Range and If-Range are steady's to send: it continues broken bodies itself")
			}
			if req.Header.Get("Accept-Encoding") == "" {
				// The bytes as stored, so that offsets are the server's and a
				// broken body can be continued (ADR 152).
				req.Header.Set("Accept-Encoding", "identity")
			}
			var sum []byte
			if sumHex != "" {
				if sum, err = parseSHA256(sumHex); err != nil {
					return err
				}
			}
			toTerminal := outPath == "" && isTerminal(cmd.OutOrStdout()) // -o - writes binary to a terminal too
			if outPath == "" {
				outPath = "-"
			}
			kind, err := checkOutput(outPath, force)
			if err != nil {
				return err
			}
			if kind != destFile && (resume || sum != nil) {
				return usagef("--resume and --sha256 need -o naming a regular file")
			}
			if g.shared, err = openShared(cmd, sharedQuota, g.stderr); err != nil {
				return err
			}
			defer g.shared.Close()
			// A download streams to its file: no body is read ahead inside the attempt.
			client, r, err := g.clientWith(target, retry.Policy{PreReadBytes: -1}, g.downloadRenderer, handKeys...)
			if err != nil {
				return err
			}
			defer client.CloseIdleConnections()
			defer r.Close()
			scopeHeaders(client.HTTP(), scoped)
			bar := r.(render.Download)
			start := time.Now()
			// The last line follows the bar's final frame.
			done := func(size int64, where string, digest []byte) {
				if err := r.Close(); err == nil && !g.quiet {
					fmt.Fprintln(g.stderr, finalLine(size, where, time.Since(start), digest))
				}
			}
			if kind == destFile {
				d := &download{out: outPath, target: target, resume: resume, force: force, sum: sum, stderr: g.stderr, client: client, bar: bar}
				if err := d.run(req); err != nil {
					return err
				}
				done(d.got, outPath, d.digest)
				return nil
			}
			out, err := createOutput(cmd.Context(), outPath, force, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer out.abort()
			resp, err := client.Do(req)
			if err != nil {
				return withServerMessage(err)
			}
			defer resp.Body.Close()
			var body io.Reader = resp.Body
			if toTerminal {
				br := bufio.NewReaderSize(resp.Body, sniffBytes)
				head, _ := br.Peek(sniffBytes)
				if why := binaryBody(resp.Header.Get("Content-Type"), head); why != "" {
					return usagef("not writing the body to a terminal: %s; use -o FILE, or -o - to write it anyway", why)
				}
				body = br
			}
			bar.Begin(0, resp.ContentLength)
			h := sha256.New()
			n, err := io.Copy(&barWriter{w: io.MultiWriter(out, h), bar: bar}, body)
			if err != nil {
				if cmd.Context().Err() != nil {
					return fmt.Errorf("interrupted after %d bytes of the body of %s", n, client.Redactor().URL(target))
				}
				return fmt.Errorf("reading the body of %s: %w", client.Redactor().URL(target), client.Redactor().Error(err))
			}
			if err := out.commit(); err != nil {
				return err
			}
			where := ""
			if outPath != "-" {
				where = outPath
			}
			done(n, where, h.Sum(nil))
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	cmd.Flags().StringVarP(&outPath, "output", "o", "", "write the body to this file, complete or not at all (- for stdout; a FIFO or device is written in place)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing output file, and start an interrupted download over")
	addReserveFlag(cmd, g)
	addSharedQuotaFlag(cmd, &sharedQuota)
	cmd.Flags().BoolVar(&resume, "resume", false, "continue FILE.partial, failing when there is none (a rerun continues anyway)")
	cmd.Flags().StringVar(&sumHex, "sha256", "", "verify the file's SHA-256 (hex) before it appears under its name")
	return cmd
}

// barWriter counts what is written on the progress bar.
type barWriter struct {
	w   io.Writer
	bar render.Download
}

func (b *barWriter) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	b.bar.Add(n)
	return n, err
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/retry"
)

// Exit codes, documented in the package comment and the README.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 3
	exitRateLimited = 4
)

// run is the whole program: tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	msg := oneLine(err)
	if code == exitFailed && ctx.Err() != nil {
		// The user stopped the run (Ctrl-C, SIGTERM): whatever failed
		// failed because of that.
		code = exitInterrupted
	}
	var ie *interruptedError
	if code == exitInterrupted && !errors.As(err, &ie) && !strings.HasPrefix(msg, "interrupted") {
		msg = "interrupted: " + msg
	}
	fmt.Fprintf(stderr, "steady: %s\n", msg)
	if code == exitUsage && isFlagError(err) {
		fmt.Fprintln(stderr, "Run 'steady --help' for usage.")
	}
	return code
}

// usageError marks a mistake in how the command was called; help says the
// mistake is in the command line itself, so a pointer to --help follows.
type usageError struct {
	err  error
	help bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

func flagErr(err error) error { return &usageError{err: err, help: true} }

func isFlagError(err error) bool {
	var ue *usageError
	return errors.As(err, &ue) && ue.help
}

// interruptedError is a harvest stopped by a transient failure or by the
// user, whose state was saved for --resume.
type interruptedError struct {
	err   error
	state string
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("%v; progress saved, continue with --resume (state in %s)", e.err, e.state)
}
func (e *interruptedError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ue *usageError
	var rl *steady.RateLimitError
	var rle *rateLimitedError
	var ie *interruptedError
	switch {
	case errors.As(err, &ue), errors.Is(err, config.ErrConfiguration):
		return exitUsage
	case errors.As(err, &rl), errors.As(err, &rle), errors.Is(err, retry.ErrRetryAfter), errors.Is(err, retry.ErrRateLimited):
		return exitRateLimited
	case errors.As(err, &ie), errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitFailed
}

// oneLine keeps an error message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stderr: stderr}
	root := &cobra.Command{
		Use:   "steady",
		Short: "Fetch from flaky, rate-limited HTTP APIs without losing data",
		Long: `steady fetches from HTTP APIs the way the steady Go library does: bounded
retry with a no-progress budget, Retry-After honoured, API keys sent only
to the hosts that accept them, safe page walks and resumable harvests.

Settings come from flags or the environment: STEADY_RETRIES (re-sends after
the first attempt, default 4), STEADY_STALL_TIMEOUT (seconds without data
before retrying stops, default 60, 0 disables), STEADY_CONCURRENT (default
32) and STEADY_API_KEY (sent only to the URL's own host, over https).

Exit codes: 0 success; 1 a request failed; 2 bad usage or settings;
3 interrupted, resumable with --resume; 4 rate limited beyond the longest
wait steady will sleep.`,
		Example: `  steady demo
  steady get https://api.example.gov/v1/status
  steady harvest https://api.example.gov/v1/items --items data -o items.jsonl`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.Args = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return flagErr(fmt.Errorf("unknown command %q", args[0]))
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return flagErr(err)
	})
	g.register(root)
	root.AddCommand(newGet(g), newHarvest(g), newDemo(g), newServe(g), newSimulate(g))
	return root
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/cmd/steady/internal/render"
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
	exitParked      = 5 // --park exit: the state is saved until resume_at
)

// run is the whole program: tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if _, ok := stderr.(*os.File); !ok {
		// The progress renderer and the commands' own lines (what a harvest
		// detected, say) write from different goroutines; a file takes each
		// write whole, any other writer gets them one at a time.
		stderr = &lockedWriter{w: stderr}
	}
	root, g := newRoot(stdin, stdout, stderr)
	defer g.stopClock()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		g.tel.finish(stderr, exitOK, "")
		return exitOK
	}
	code := exitCode(err)
	if mt := g.maxTimeHit(err); mt != nil {
		err = fmt.Errorf("%w: %w", mt, err)
	}
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
	msg = render.InFlagWords(msg)
	if code == exitInterrupted && isTerminal(stderr) {
		// The terminal echoed ^C where the cursor stood: the line starts
		// clean.
		fmt.Fprint(stderr, "\r\x1b[K")
	}
	fmt.Fprintf(stderr, "steady: %s\n", msg)
	if code == exitUsage && isFlagError(err) {
		fmt.Fprintln(stderr, "Run 'steady --help' for usage.")
	}
	g.tel.finish(stderr, code, msg)
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
	what := e.err.Error()
	if errors.Is(e.err, context.Canceled) {
		what = "interrupted" // the user's own Ctrl-C: the library's words add nothing
	}
	return fmt.Sprintf("%s; progress saved in %s: the same command continues it (as does --resume), --force starts over", what, e.state)
}
func (e *interruptedError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ue *usageError
	var rl *steady.RateLimitError
	var rle *rateLimitedError
	var ie *interruptedError
	var pe *parkedError
	switch {
	case errors.As(err, &pe):
		return exitParked
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

func newRoot(stdin io.Reader, stdout, stderr io.Writer) (*cobra.Command, *globals) {
	g := &globals{stderr: stderr}
	var version bool
	root := &cobra.Command{
		Use:   "steady",
		Short: "Fetch from flaky, rate-limited HTTP APIs without losing data",
		Long: `steady fetches from HTTP APIs the way the steady Go library does: bounded
retry with a no-progress budget, Retry-After honoured, API keys sent only
to the hosts that accept them, safe page walks and resumable harvests.

Settings come from flags or the environment (a flag wins, even over a
malformed variable): STEADY_RETRIES (re-sends after the first attempt,
default 4), STEADY_STALL_TIMEOUT (seconds without data before retrying
stops, default 60, 0 disables), STEADY_CONCURRENT (default 32),
STEADY_CONNECT_TIMEOUT (default 10), STEADY_READ_TIMEOUT (seconds an
attempt waits for headers and for each silence in the body, default 60),
STEADY_MAX_TIME (seconds for the whole command, default no limit),
STEADY_MAX_RETRY_AFTER (the longest server-named wait slept off, default
60) and STEADY_API_KEY (sent only to the URL's own host, over https).

Exit codes: 0 success; 1 a request failed; 2 bad usage or settings;
3 interrupted, resumable with --resume; 4 rate limited beyond the longest
wait steady will sleep; 5 parked by harvest --park exit until resume_at.`,
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
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if version {
			return writeVersion(cmd.OutOrStdout())
		}
		return cmd.Help()
	}
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		err := g.startClock(cmd)
		if err == nil {
			g.tel = startTelemetry(cmd, stderr)
		}
		return err
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return flagErr(flagValueError(err))
	})
	g.register(root)
	root.Flags().BoolVar(&version, "version", false, "print the version, commit and Go release of this binary")
	root.AddCommand(newGet(g), newHarvest(g), newDemo(g), newServe(g), newSimulate(g), newVersion())
	strictCompletion(root)
	return root, g
}

// strictCompletion makes "steady completion SHELL" refuse a shell it has no
// script for with exit 2, where cobra would print its help and succeed.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sub := range c.Commands() {
			shells = append(shells, sub.Name())
		}
		c.Args = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return flagErr(fmt.Errorf("completion needs a shell: %s", strings.Join(shells, ", ")))
			}
			return flagErr(fmt.Errorf("completion: unknown shell %q: want %s", args[0], strings.Join(shells, ", ")))
		}
		c.RunE = func(*cobra.Command, []string) error { return nil }
	}
}

// flagValueError restates pflag's "invalid argument "ten" for "--retries"
// flag: strconv.ParseInt: parsing ..." as what the user typed and what is
// wanted: "--retries ten: want a whole number of re-sends, ...".
func flagValueError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	f := ive.GetFlag()
	want := ""
	switch {
	case errors.Is(ive, config.ErrConfiguration):
		want = ive.Unwrap().Error() // a setting flag: config's own words
	default:
		want = typeWant(f.Value.Type(), ive.Unwrap())
	}
	return fmt.Errorf("--%s %s: %s", f.Name, quoteIfNeeded(ive.GetValue()), want)
}

// typeWant says what a flag of a pflag type accepts.
func typeWant(typ string, cause error) string {
	switch typ {
	case "int", "int64":
		return "want a whole number"
	case "uint64", "uint":
		return "want a whole number, 0 or more"
	case "float64":
		return "want a number"
	case "bool":
		return "want true or false"
	}
	return cause.Error()
}

// quoteIfNeeded shows a plain word as typed and anything else quoted, so an
// empty or spaced value is visible in the message.
func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '"' || r > '~' }) {
		return strconv.Quote(s)
	}
	return s
}

// completeValues makes shell completion offer choices as the value of a
// flag, each with a description after a tab.
func completeValues(cmd *cobra.Command, flag string, choices ...string) {
	if err := cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(choices, cobra.ShellCompDirectiveNoFileComp)); err != nil {
		panic(err) // a flag name misspelt here is a programming error
	}
}

// The choices shell completion offers for the flags that take a name.
var (
	faultChoices = []string{"none\tno faults", "mild\toccasional 429s, 5xx and resets", "harsh\tevery fault, often"}
	styleChoices = []string{"link\tRFC 8288 Link header", "json-links\tOGC API / STAC links in the body", "cursor\ta cursor field sent back as a parameter"}
	pagesChoices = []string{"auto\tLink header or JSON links, told apart on the first page", "link\tRFC 8288 Link header", "json-links\tOGC API / STAC links in the body", "cursor:\tcursor:FIELD:PARAM, a cursor field sent back as a parameter"}
)

// lockedWriter serialises the writes of several goroutines to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/cmd/steady/internal/render"
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// globals are the settings every command shares: flags win over the
// environment, which wins over the defaults.
type globals struct {
	stderr    io.Writer
	flags     config.Settings // the values of the setting flags given
	quiet     bool
	verbose   bool
	keyHeader string
	keyQuery  string
	shared    *sharedStore // set by a command given --shared-quota
	reserve   float64      // --reserve: the part of every quota window left to others
	tel       *telemetry   // the run's OTLP export, nil without one

	root        *cobra.Command
	clock       context.Context // the command's context under --max-time, nil without one
	stopClockFn context.CancelFunc
}

// settingFlags are the flags that stand for a config variable, each parsed
// by config's own parser so a flag and its variable accept the same text.
var settingFlags = []struct {
	name  string
	v     config.Var
	usage string
}{
	{"retries", config.VarRetries, "re-sends after the first attempt, 0 disables retry"},
	{"stall-timeout", config.VarStallTimeout, "seconds a call may go without receiving data before retrying stops, 0 disables"},
	{"concurrent", config.VarConcurrent, "requests in flight at once"},
	{"connect-timeout", config.VarConnectTimeout, "seconds one attempt may take to connect (dial and TLS handshake)"},
	{"read-timeout", config.VarReadTimeout, "seconds one attempt waits for the response's headers, and for each silence in its body, 0 disables"},
	{"max-time", config.VarMaxTime, "seconds the whole command may take, every attempt and wait included, 0 means no limit"},
	{"max-retry-after", config.VarMaxRetryAfter, "the longest server-named wait (Retry-After, a quota reset) slept off; a longer one stops with exit 4"},
}

func (g *globals) register(root *cobra.Command) {
	g.root = root
	g.flags = config.Defaults()
	f := root.PersistentFlags()
	for _, sf := range settingFlags {
		usage := fmt.Sprintf("%s (env %s)", sf.usage, config.Name(config.DefaultPrefix, sf.v))
		f.Var(&settingFlag{s: &g.flags, v: sf.v}, sf.name, usage)
	}
	f.BoolVarP(&g.quiet, "quiet", "q", false, "no progress on stderr")
	f.BoolVarP(&g.verbose, "verbose", "v", false, "a line on stderr for every attempt: method, URL, status or failure, and any wait with its reason")
	f.StringVar(&g.keyHeader, "key-header", "X-Api-Key", "header that carries STEADY_API_KEY")
	f.StringVar(&g.keyQuery, "key-query", "", "query parameter that carries STEADY_API_KEY instead of a header")
}

// settingFlag is a flag for one config variable.
type settingFlag struct {
	s *config.Settings
	v config.Var
}

func (f *settingFlag) Set(text string) error { return f.s.Set(f.v, text) }

func (f *settingFlag) Type() string {
	switch f.v {
	case config.VarRetries, config.VarConcurrent:
		return "int"
	}
	return "seconds"
}

func (f *settingFlag) String() string {
	if f.s == nil {
		return ""
	}
	switch f.v {
	case config.VarRetries:
		return strconv.Itoa(f.s.Retries)
	case config.VarConcurrent:
		return strconv.Itoa(f.s.Concurrent)
	case config.VarStallTimeout:
		return seconds(f.s.StallTimeout)
	case config.VarConnectTimeout:
		return seconds(f.s.ConnectTimeout)
	case config.VarReadTimeout:
		return seconds(f.s.ReadTimeout)
	case config.VarMaxTime:
		return seconds(f.s.MaxTime)
	case config.VarMaxRetryAfter:
		return seconds(f.s.MaxRetryAfter)
	}
	return ""
}

// seconds writes d as a number of seconds, the form the flags read.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// settings merges the environment and the flags that were set. A variable
// whose flag was given is not read at all, so a flag overrides a variable
// even when the variable's value is malformed.
func (g *globals) settings() (config.Settings, error) {
	f := g.root.PersistentFlags()
	given := config.Var(0)
	for _, sf := range settingFlags {
		if f.Changed(sf.name) {
			given |= sf.v
		}
	}
	lookup := func(name string) (string, bool) {
		for _, sf := range settingFlags {
			if given.Has(sf.v) && name == config.Name(config.DefaultPrefix, sf.v) {
				return "", false
			}
		}
		return os.LookupEnv(name)
	}
	s, err := config.FromLookup(config.DefaultPrefix, lookup)
	if err != nil {
		return s, err
	}
	for _, v := range config.Vars() {
		if !given.Has(v) {
			continue
		}
		switch v {
		case config.VarRetries:
			s.Retries = g.flags.Retries
		case config.VarStallTimeout:
			s.StallTimeout = g.flags.StallTimeout
		case config.VarConcurrent:
			s.Concurrent = g.flags.Concurrent
		case config.VarConnectTimeout:
			s.ConnectTimeout = g.flags.ConnectTimeout
		case config.VarReadTimeout:
			s.ReadTimeout = g.flags.ReadTimeout
		case config.VarMaxTime:
			s.MaxTime = g.flags.MaxTime
		case config.VarMaxRetryAfter:
			s.MaxRetryAfter = g.flags.MaxRetryAfter
		}
		s.Explicit |= v
	}
	return s, nil
}

// options returns the client options the settings give: every value, the
// defaults included, so the command line behaves the same whatever the
// library's own defaults become.
func options(policy retry.Policy, s config.Settings) steady.Options {
	policy = retry.FromSettings(policy, s)
	policy.MaxRetryAfter = s.MaxRetryAfter
	opt := steady.Options{Concurrency: s.Concurrent, ConnectTimeout: s.ConnectTimeout}
	// One setting bounds both silences of an attempt, before the headers and
	// inside the body; 0 disables both.
	opt.ResponseHeaderTimeout, policy.ReadTimeout = s.ReadTimeout, s.ReadTimeout
	if s.ReadTimeout == 0 {
		opt.ResponseHeaderTimeout, policy.ReadTimeout = -1, -1
	}
	// A body silent for longer than the stall budget could never be
	// followed by a re-send, so a read timeout left at its default is cut
	// to the budget: STEADY_STALL_TIMEOUT=2 ends a body that stops within
	// seconds, not minutes (ADR 150).
	if !s.Explicit.Has(config.VarReadTimeout) && s.StallTimeout > 0 && s.StallTimeout < s.ReadTimeout {
		policy.ReadTimeout = s.StallTimeout
	}
	opt.Policy = policy
	return opt
}

// clientFor builds the client for requests to target, and the progress
// renderer on stderr that its events go to (the caller closes it): the
// policy from the settings (pacing on, as a command-line user expects), and
// the API key, if one is set, scoped to target's own host.
func (g *globals) clientFor(target *url.URL, policy retry.Policy, handKeys ...credentials.Key) (*steady.Client, render.Renderer, error) {
	return g.clientWith(target, policy, g.renderer, handKeys...)
}

// clientWith is clientFor with the renderer chosen by pick.
func (g *globals) clientWith(target *url.URL, policy retry.Policy, pick func(*url.URL, config.Settings) render.Renderer, handKeys ...credentials.Key) (*steady.Client, render.Renderer, error) {
	s, err := g.settings()
	if err != nil {
		return nil, nil, err
	}
	policy.Pacer = &ratelimit.Pacer{MaxHold: policy.MaxRetryAfter, Reserve: g.reserve}
	policy = g.shared.share(policy)
	opt := options(policy, s)
	if s.APIKey != "" {
		key, err := g.keyFor(target, s.APIKey)
		if err != nil {
			return nil, nil, err
		}
		opt.Keys = append(opt.Keys, key)
	}
	opt.Keys = append(opt.Keys, handKeys...)
	r := pick(target, s)
	opt.Reporter = event.Multi(r, g.tel.reporter(opt.Keys))
	c, err := steady.New(opt)
	if err != nil {
		r.Close()
		return nil, nil, &usageError{err: err}
	}
	return c, r, nil
}

// addHandKey adds a credential header given with -H to keys, scoped to
// target's host as keyFor scopes STEADY_API_KEY. Cookies given twice are
// joined as one Cookie header; any other credential header given twice is
// a usage error, since only one value can be sent.
func (g *globals) addHandKey(keys []credentials.Key, target *url.URL, name, value string) ([]credentials.Key, error) {
	for i := range keys {
		if !strings.EqualFold(keys[i].Header, name) {
			continue
		}
		if !strings.EqualFold(name, "Cookie") {
			return nil, usagef("-H %s is given twice; give it once", name)
		}
		keys[i].Value += "; " + value
		return keys, nil
	}
	k, err := scopeKey(credentials.Key{Header: name, Value: value}, target, "the "+name+" header")
	if err != nil {
		return nil, err
	}
	return append(keys, k), nil
}

// keyFor scopes the key to target's host: https always; plain http only to a
// loopback host, for local servers. A key is never sent in clear text over
// the network.
func (g *globals) keyFor(target *url.URL, value string) (credentials.Key, error) {
	k := credentials.Key{Value: value}
	if g.keyQuery != "" {
		k.Query = g.keyQuery
	} else {
		k.Header = g.keyHeader
	}
	return scopeKey(k, target, "STEADY_API_KEY")
}

// scopeKey gives k target's host as its one origin and validates it; what
// names the secret in the messages.
func scopeKey(k credentials.Key, target *url.URL, what string) (credentials.Key, error) {
	switch {
	case target.Scheme == "https":
		k.Hosts = []string{target.Host}
	case target.Scheme == "http" && isLoopback(target.Hostname()):
		k.Hosts = []string{"http://" + target.Host}
	default:
		return k, usagef("refusing to send %s over plain http to %s; use https", what, target.Host)
	}
	if err := k.Validate(); err != nil {
		return k, &usageError{err: err}
	}
	return k, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// renderer returns the progress renderer for stderr, with the key hint
// configured for target's host.
func (g *globals) renderer(target *url.URL, s config.Settings) render.Renderer {
	opt := render.Options{Quiet: g.quiet, Verbose: g.verbose, KeySet: s.APIKey != "", KeyEnv: config.Name(config.DefaultPrefix, config.VarAPIKey)}
	if target != nil && s.APIKey == "" && (g.root.PersistentFlags().Changed("key-header") || g.keyQuery != "") {
		// The user told us this host takes a key: hint after a 429.
		opt.KeyHosts = []string{target.Host}
	}
	return render.Auto(g.stderr, opt)
}

// downloadRenderer is the byte renderer get shows on stderr.
func (g *globals) downloadRenderer(target *url.URL, s config.Settings) render.Renderer {
	opt := render.Options{Quiet: g.quiet, Verbose: g.verbose, KeySet: s.APIKey != "", KeyEnv: config.Name(config.DefaultPrefix, config.VarAPIKey)}
	return render.NewDownload(g.stderr, opt)
}

// parseTarget checks a URL argument.
func parseTarget(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("invalid URL %s: want an absolute http or https URL", typedURL(raw))
	}
	return u, nil
}

// typedURL shows a URL argument as the user typed it (quoted, so spaces
// and control characters are visible), unless that would show a secret:
// then it is the redacted form, or no form at all for text that does not
// parse but could hold userinfo or a query.
func typedURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil && strings.ContainsAny(raw, "@?"):
		return "(an unparsable URL, not shown as it may hold a credential)"
	case err != nil, credentials.RedactURL(u) == u.String():
		return strconv.Quote(raw)
	}
	return strconv.Quote(credentials.RedactURL(u))
}

func exactlyOneURL(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return flagErr(fmt.Errorf("want exactly one URL, got %s", plural(len(args), "argument", "arguments")))
	}
	return nil
}

func noArgs(_ *cobra.Command, args []string) error {
	if len(args) != 0 {
		return flagErr(fmt.Errorf("unexpected argument %q", args[0]))
	}
	return nil
}

// maxTimeError is the cause of a command stopped by --max-time.
type maxTimeError struct{ d time.Duration }

func (e *maxTimeError) Error() string {
	return "stopped at --max-time " + seconds(e.d) + "s"
}

// startClock applies --max-time (or STEADY_MAX_TIME) to the command's
// context. Only that setting is read here, so a malformed variable of
// another setting does not break commands that never use it.
func (g *globals) startClock(cmd *cobra.Command) error {
	switch cmd.Name() {
	case "get", "harvest", "demo", "serve", "simulate":
	default:
		return nil // version, help, completion: nothing to bound
	}
	d := g.flags.MaxTime
	if !g.root.PersistentFlags().Changed("max-time") {
		name := config.Name(config.DefaultPrefix, config.VarMaxTime)
		s, err := config.FromLookup(config.DefaultPrefix, func(n string) (string, bool) {
			if n != name {
				return "", false
			}
			return os.LookupEnv(n)
		})
		if err != nil {
			return err
		}
		d = s.MaxTime
	}
	if d <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeoutCause(cmd.Context(), d, &maxTimeError{d})
	g.clock, g.stopClockFn = ctx, cancel
	cmd.SetContext(ctx)
	return nil
}

func (g *globals) stopClock() {
	if g.stopClockFn != nil {
		g.stopClockFn()
	}
}

// maxTimeHit returns the --max-time cause when it is what ended err's
// command.
func (g *globals) maxTimeHit(err error) error {
	if g.clock == nil || !errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	var mt *maxTimeError
	if errors.As(context.Cause(g.clock), &mt) {
		return mt
	}
	return nil
}

// reserveFlag is --reserve N%: the share of every quota window the run
// leaves to other users of the key, 0% to 90% (ratelimit.MaxReserve).
type reserveFlag struct{ v *float64 }

func (f reserveFlag) Type() string { return "percent" }

func (f reserveFlag) String() string {
	if f.v == nil || *f.v == 0 {
		return "0%"
	}
	return strconv.FormatFloat(*f.v*100, 'f', -1, 64) + "%"
}

func (f reserveFlag) Set(text string) error {
	n, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(text), "%"), 64)
	p := &ratelimit.Pacer{Reserve: n / 100}
	if err != nil || strings.ContainsAny(text, "eEnNxX_") || p.Validate() != nil {
		return fmt.Errorf("want a share of every quota window from 0%% to %v%%, such as 20%%", ratelimit.MaxReserve*100)
	}
	*f.v = n / 100
	return nil
}

// addReserveFlag registers --reserve on a command that sends requests.
func addReserveFlag(cmd *cobra.Command, g *globals) {
	cmd.Flags().Var(reserveFlag{&g.reserve}, "reserve", "leave this share of every quota window (RateLimit-Policy, X-RateLimit-Limit) to other users of the key, such as 20%")
}

package main

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/progress"
	"github.com/steadyhttp/steady/retry"
)

// globals are the settings every command shares: flags win over the
// environment, which wins over the defaults.
type globals struct {
	stderr       io.Writer
	retries      int
	stallTimeout float64
	concurrent   int
	quiet        bool
	keyHeader    string
	keyQuery     string

	root *cobra.Command
}

func (g *globals) register(root *cobra.Command) {
	g.root = root
	f := root.PersistentFlags()
	f.IntVar(&g.retries, "retries", config.DefaultRetries, "re-sends after the first attempt, 0 disables retry (env STEADY_RETRIES)")
	f.Float64Var(&g.stallTimeout, "stall-timeout", config.DefaultStallTimeout.Seconds(), "seconds a call may go without receiving data before retrying stops, 0 disables (env STEADY_STALL_TIMEOUT)")
	f.IntVar(&g.concurrent, "concurrent", config.DefaultConcurrent, "requests in flight at once (env STEADY_CONCURRENT)")
	f.BoolVarP(&g.quiet, "quiet", "q", false, "no progress on stderr")
	f.StringVar(&g.keyHeader, "key-header", "X-Api-Key", "header that carries STEADY_API_KEY")
	f.StringVar(&g.keyQuery, "key-query", "", "query parameter that carries STEADY_API_KEY instead of a header")
}

// settings merges the environment and the flags that were set.
func (g *globals) settings() (config.Settings, error) {
	s, err := config.FromEnv(config.DefaultPrefix)
	if err != nil {
		return s, err
	}
	f := g.root.PersistentFlags()
	if f.Changed("retries") {
		if g.retries < 0 {
			return s, usagef("--retries %d: want a whole number of re-sends, 0 or more", g.retries)
		}
		s.Retries = g.retries
	}
	if f.Changed("stall-timeout") {
		if g.stallTimeout < 0 || g.stallTimeout != g.stallTimeout || g.stallTimeout > 1e9 {
			return s, usagef("--stall-timeout %v: want seconds, 0 or more (0 disables)", g.stallTimeout)
		}
		s.StallTimeout = time.Duration(g.stallTimeout * float64(time.Second))
	}
	if f.Changed("concurrent") {
		if g.concurrent < 1 {
			return s, usagef("--concurrent %d: want 1 or more", g.concurrent)
		}
		s.Concurrent = g.concurrent
	}
	return s, nil
}

// clientFor builds the client for requests to target, and the progress
// renderer on stderr that its events go to (the caller closes it): the
// policy from the settings (pacing on, as a command-line user expects), and
// the API key, if one is set, scoped to target's own host.
func (g *globals) clientFor(target *url.URL, policy retry.Policy, handKeys ...credentials.Key) (*steady.Client, progress.Renderer, error) {
	return g.clientWith(target, policy, g.renderer, handKeys...)
}

// clientWith is clientFor with the renderer chosen by pick.
func (g *globals) clientWith(target *url.URL, policy retry.Policy, pick func(*url.URL, config.Settings) progress.Renderer, handKeys ...credentials.Key) (*steady.Client, progress.Renderer, error) {
	s, err := g.settings()
	if err != nil {
		return nil, nil, err
	}
	policy = retry.FromSettings(policy, s)
	policy.Pace = true
	opt := steady.Options{Policy: policy, Concurrency: s.Concurrent}
	if s.APIKey != "" {
		key, err := g.keyFor(target, s.APIKey)
		if err != nil {
			return nil, nil, err
		}
		opt.Keys = append(opt.Keys, key)
	}
	opt.Keys = append(opt.Keys, handKeys...)
	r := pick(target, s)
	opt.Reporter = r
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
func (g *globals) renderer(target *url.URL, s config.Settings) progress.Renderer {
	opt := progress.Options{Quiet: g.quiet, KeySet: s.APIKey != "", KeyEnv: config.Name(config.DefaultPrefix, config.VarAPIKey)}
	if target != nil && s.APIKey == "" && (g.root.PersistentFlags().Changed("key-header") || g.keyQuery != "") {
		// The user told us this host takes a key: hint after a 429.
		opt.KeyHosts = []string{target.Host}
	}
	return progress.Auto(g.stderr, opt)
}

// downloadRenderer is the byte renderer get shows on stderr.
func (g *globals) downloadRenderer(target *url.URL, s config.Settings) progress.Renderer {
	opt := progress.Options{Quiet: g.quiet, KeySet: s.APIKey != "", KeyEnv: config.Name(config.DefaultPrefix, config.VarAPIKey)}
	return progress.NewDownload(g.stderr, opt)
}

// parseTarget checks a URL argument.
func parseTarget(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("invalid URL %q: want an absolute http or https URL", credentials.RedactURLString(raw))
	}
	return u, nil
}

func exactlyOneURL(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return flagErr(fmt.Errorf("want exactly one URL, got %d arguments", len(args)))
	}
	return nil
}

func noArgs(_ *cobra.Command, args []string) error {
	if len(args) != 0 {
		return flagErr(fmt.Errorf("unexpected argument %q", args[0]))
	}
	return nil
}

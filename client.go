package steady

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/sync/semaphore"

	"github.com/steadyhttp/steady/breaker"
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/resume"
	"github.com/steadyhttp/steady/retry"
)

// A Client is the whole steady stack. It is safe for concurrent use; make
// one per API and reuse it, since it owns a connection pool.
type Client struct {
	opt   Options
	base  *url.URL
	pool  http.RoundTripper // the bottom transport, shared by copies from With
	retry *retry.Transport
	http  *http.Client
	red   *credentials.Redactor // the keys' values: every text the client writes goes through it
	gate  *semaphore.Weighted
	brk   *breaker.Breaker // overload control made for the client, shared by copies from With; nil when off
	err   error            // options that did not validate (With), else nil

	uaValue []string // the User-Agent header of the requests the client builds

}

// New returns a client for opt. It fails with a clear error when a key, the
// retry policy or the base URL is invalid.
func New(opt Options) (*Client, error) {
	opt = opt.withDefaults()
	pool := opt.Transport
	if pool == nil {
		pool = newPool(opt)
	}
	return build(opt, pool, nil)
}

// FromEnv returns a client whose retry policy, stall budget, concurrency,
// timeouts and API key come from the environment variables <prefix>_RETRIES,
// <prefix>_STALL_TIMEOUT, <prefix>_CONCURRENT, <prefix>_CONNECT_TIMEOUT,
// <prefix>_READ_TIMEOUT, <prefix>_MAX_RETRY_AFTER and <prefix>_API_KEY
// (prefix "" means STEADY), where set; opt supplies everything else.
// <prefix>_MAX_TIME bounds a whole call, which is the caller's context
// deadline to set: it is read (and checked) but not applied here. A bad value is a
// *config.ConfigurationError naming the variable. An API key fills every key
// in opt.Keys that has no value; a key with nowhere to go is an error, since
// steady never guesses which host may receive it.
func FromEnv(prefix string, opt Options) (*Client, error) {
	s, err := config.FromEnv(prefix)
	if err != nil {
		return nil, err
	}
	return New(ApplySettings(opt, s, prefix))
}

// ApplySettings returns opt with the explicitly set values of s applied, as
// [FromEnv] does; it is exported for programs that read settings themselves.
func ApplySettings(opt Options, s config.Settings, prefix string) Options {
	if s.Explicit.Has(config.VarRetries) || s.Explicit.Has(config.VarStallTimeout) {
		p := retry.FromSettings(opt.Policy, s)
		if !s.Explicit.Has(config.VarRetries) {
			p.MaxAttempts = opt.Policy.MaxAttempts
		}
		if !s.Explicit.Has(config.VarStallTimeout) {
			p.StallTimeout = opt.Policy.StallTimeout
		}
		opt.Policy = p
	}
	if s.Explicit.Has(config.VarConcurrent) {
		opt.Concurrency = s.Concurrent
	}
	if s.Explicit.Has(config.VarConnectTimeout) {
		opt.ConnectTimeout = s.ConnectTimeout
	}
	if s.Explicit.Has(config.VarReadTimeout) {
		// One setting bounds both silences of an attempt: before the headers
		// and inside the body. 0 disables both.
		opt.ResponseHeaderTimeout, opt.Policy.ReadTimeout = s.ReadTimeout, s.ReadTimeout
		if s.ReadTimeout == 0 {
			opt.ResponseHeaderTimeout, opt.Policy.ReadTimeout = -1, -1
		}
	}
	if s.Explicit.Has(config.VarMaxRetryAfter) {
		opt.Policy.MaxRetryAfter = s.MaxRetryAfter
	}
	if s.APIKey != "" {
		keys := make([]credentials.Key, len(opt.Keys))
		copy(keys, opt.Keys)
		for i := range keys {
			if keys[i].Value == "" {
				keys[i].Value = s.APIKey
			}
		}
		if len(keys) == 0 {
			// Kept as an invalid key so New reports it with the variable's name.
			keys = append(keys, credentials.Key{Header: "X-Api-Key", Value: s.APIKey})
			opt.Keys = keys
			opt.keyEnv = config.Name(prefix, config.VarAPIKey)
			return opt
		}
		opt.Keys = keys
	}
	return opt
}

func build(opt Options, pool http.RoundTripper, brk *breaker.Breaker) (*Client, error) {
	if err := opt.Policy.Validate(); err != nil {
		return nil, err
	}
	if err := opt.Overload.Validate(); err != nil {
		return nil, fmt.Errorf("steady: Options.Overload: %w", err)
	}
	if opt.keyEnv != "" && len(opt.Keys) == 1 && len(opt.Keys[0].Hosts) == 0 {
		return nil, fmt.Errorf("steady: %s is set but no Options.Keys entry names the hosts that accept it", opt.keyEnv)
	}
	for i, k := range opt.Keys {
		if err := k.Validate(); err != nil {
			return nil, fmt.Errorf("steady: Options.Keys[%d]: %w", i, err)
		}
	}
	if err := credentials.ValidateKeys(opt.Keys...); err != nil {
		return nil, fmt.Errorf("steady: Options.Keys: %w", err)
	}
	var base *url.URL
	if opt.BaseURL != "" {
		u, err := url.Parse(opt.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("steady: Options.BaseURL %q is not an absolute http(s) URL", credentials.RedactURLString(opt.BaseURL))
		}
		base = u
	}
	// From the top (ADR 131): http.Client, the body layer (ADR 265), retry,
	// User-Agent, credentials, the pool. Credentials sits right above the pool, so every layer of
	// steady's sees only key-free requests, and it decides on every attempt
	// of every hop; it is there even without keys, to scope credentials set
	// by hand.
	red := credentials.NewRedactor(keyValues(opt.Keys)...)
	policy := opt.Policy
	policy.Reporter = redactReporter(policy.Reporter, red)
	if brk == nil {
		brk = newBreaker(opt, policy.Reporter)
	}
	if policy.Overload == nil && !opt.NoOverload {
		policy.Overload, policy.OverloadKey = brk, overloadKey(opt.Keys)
	}
	rtr := retry.New(&userAgent{next: credentials.NewTransport(pool, opt.Keys...), ua: []string{opt.UserAgent}}, policy)
	c := &Client{
		opt:   opt,
		base:  base,
		pool:  pool,
		retry: rtr,
		red:   red,
		gate:  semaphore.NewWeighted(int64(opt.Concurrency)),
		brk:   brk,

		uaValue: []string{opt.UserAgent},
	}
	c.http = &http.Client{Transport: resume.New(rtr), CheckRedirect: c.checkRedirect}
	return c, nil
}

// newBreaker makes the client's overload control, its MaxConcurrency the
// client's Concurrency unless set, its changes reported to rep as well as
// to the config's own OnChange. A client built off or with a Breaker of
// its own still makes one, for the copies With makes: it costs a map.
func newBreaker(opt Options, rep event.Reporter) *breaker.Breaker {
	cfg := opt.Overload
	if cfg.MaxConcurrency == 0 {
		cfg.MaxConcurrency = opt.Concurrency
	}
	if own := cfg.OnChange; rep != nil {
		cfg.OnChange = func(ch breaker.Change) {
			if own != nil {
				own(ch)
			}
			event.Emit(rep, ch.Event())
		}
	}
	b, err := breaker.New(cfg)
	if err != nil {
		panic("steady: a validated breaker config was refused: " + err.Error())
	}
	return b
}

// overloadKey keeps apart, at one host, the overload state of clients with
// different keys when they share a Breaker: a digest of the keys' values,
// never the values; "" without keys.
func overloadKey(keys []credentials.Key) string {
	vals := slices.Sorted(slices.Values(keyValues(keys)))
	vals = slices.DeleteFunc(vals, func(v string) bool { return v == "" })
	if len(vals) == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.Join(vals, "\x00")))
	return hex.EncodeToString(sum[:8])
}

func keyValues(keys []credentials.Key) []string {
	v := make([]string, len(keys))
	for i, k := range keys {
		v[i] = k.Value
	}
	return v
}

// newPool returns the tuned bottom transport.
func newPool(opt Options) *http.Transport {
	dialer := &net.Dialer{Timeout: opt.ConnectTimeout, KeepAlive: 30 * 1e9}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          max(100, 2*opt.Concurrency),
		MaxIdleConnsPerHost:   opt.Concurrency, // the default of 2 would redial for every fan-out item
		IdleConnTimeout:       90 * 1e9,
		TLSHandshakeTimeout:   opt.ConnectTimeout,
		ResponseHeaderTimeout: max(opt.ResponseHeaderTimeout, 0), // negative: no bound, which net/http spells 0
		ExpectContinueTimeout: 1e9,
	}
}

// MaxRedirects matches net/http's own limit.
const MaxRedirects = 10

// RedirectError is a redirect the client refused to follow: the tenth in a
// row (a loop, most likely), or one from https to plain http.
type RedirectError struct {
	Hops      int    // redirects followed before this one
	URL       string // where it pointed, redacted
	Downgrade bool   // https to http
}

func (e *RedirectError) Error() string {
	if e.Downgrade {
		return "refusing a redirect from https to http (" + e.URL + ")"
	}
	return fmt.Sprintf("stopped after %d redirects (the last pointed at %s)", e.Hops, e.URL)
}

// checkRedirect follows at most ten redirects and never from https to http:
// a downgrade would expose the request to the network even with the key
// withheld.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return &RedirectError{Hops: len(via), URL: c.red.URL(req.URL)}
	}
	if prev := via[len(via)-1]; prev.URL.Scheme == "https" && req.URL.Scheme != "https" {
		return &RedirectError{Hops: len(via), URL: c.red.URL(req.URL), Downgrade: true}
	}
	// A key in the host or path of a hop to an origin that does not accept
	// it is refused here too, before the hop: refused below, the layers in
	// between would quote the URL in their own errors.
	for _, k := range c.opt.Keys {
		red := credentials.NewRedactor(k.Value)
		if !k.Accepts(req.URL) && (red.Contains(req.URL.Host) || red.Contains(req.URL.EscapedPath())) {
			return &credentials.LeakError{URL: c.red.URL(req.URL), Where: "the URL's host or path"}
		}
	}
	return nil
}

// userAgent sets the User-Agent of requests that have none. Requests the
// client builds itself already carry one and pass through untouched.
type userAgent struct {
	next http.RoundTripper
	ua   []string // shared by every request it is set on, never modified
}

// RoundTrip sends req, or a shallow copy of it whose header map adds the
// User-Agent: the caller's request is never modified, and nothing else of
// it needs copying (ADR 193).
func (u *userAgent) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, ok := req.Header["User-Agent"]; ok {
		return u.next.RoundTrip(req)
	}
	r := new(http.Request)
	*r = *req
	r.Header = headerWith(req.Header, "User-Agent", u.ua)
	return u.next.RoundTrip(r)
}

// headerWith returns a copy of h with key set to v. The value slices are
// shared, not copied: the layers below are RoundTrippers, which must not
// modify a request, and steady's own replace a header's slice rather than
// write into it.
func headerWith(h http.Header, key string, v []string) http.Header {
	c := maps.Clone(h)
	if c == nil {
		c = make(http.Header, 1)
	}
	c[key] = v
	return c
}

func (u *userAgent) CloseIdleConnections() {
	if c, ok := u.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// HTTP returns the whole stack as an *http.Client, usable with any generated
// API client. Its redirects are followed by net/http, each hop through the
// credentials and retry layers.
func (c *Client) HTTP() *http.Client { return c.http }

// Redactor returns the client's redactor, made once from its keys: the one
// every error and event of the client goes through. Programs use it for
// the texts and files they write themselves.
func (c *Client) Redactor() *credentials.Redactor { return c.red }

// Options returns the client's options, defaults applied.
func (c *Client) Options() Options { return c.opt }

// With returns a copy of c with some options changed that shares c's
// connection pool, for instance one call with retries disabled. The pool's
// own settings (Transport, ConnectTimeout, ResponseHeaderTimeout) cannot
// change this way; per-request deadlines go in the request's context. The
// copy has its own rate-limit pacing state, and its own concurrency gate
// when Concurrency changes. It shares c's overload control, whose state is
// the hosts' own, so Overload cannot change this way (NoOverload can turn
// it off for the copy; a Policy.Overload set replaces it), and its changes
// go to c's Reporter. Options that do not validate (a bad key or
// policy) give a copy whose every request fails with that error before
// anything is sent, as [retry.New] does with an invalid policy; [Client.Err]
// reports it at once.
func (c *Client) With(edit func(*Options)) *Client {
	opt := c.opt
	if opt.derivedReporter {
		opt.Policy.Reporter, opt.derivedReporter = nil, false // re-derived below, in case Reporter changes
	}
	edit(&opt)
	opt.Transport, opt.ConnectTimeout, opt.ResponseHeaderTimeout = c.opt.Transport, c.opt.ConnectTimeout, c.opt.ResponseHeaderTimeout
	opt = opt.withDefaults()
	n, err := build(opt, c.pool, c.brk)
	if err != nil {
		return &Client{opt: opt, base: c.base, pool: c.pool, gate: c.gate, err: err,
			http: &http.Client{Transport: failing{err}}}
	}
	if opt.Concurrency == c.opt.Concurrency {
		n.gate = c.gate
	}
	return n
}

// Err reports why a client made by [Client.With] cannot send: its options
// did not validate. It is nil for a working client.
func (c *Client) Err() error { return c.err }

// failing refuses every request with the error that made its client
// unusable.
type failing struct{ err error }

func (f failing) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, f.err
}

// CloseIdleConnections closes the pool's idle connections.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// resolve turns a path or URL into an absolute URL against the base URL,
// with query added. Credential-shaped query names are refused: keys go in
// Options.Keys, the one place that knows where they may be sent.
func (c *Client) resolve(path string, query url.Values) (*url.URL, error) {
	if err := credentials.CheckQuery(query); err != nil {
		return nil, err
	}
	ref, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("steady: invalid path %q: %w", c.red.URLString(path), c.red.Error(err))
	}
	u := ref
	if c.base != nil {
		u = c.base.ResolveReference(ref)
		if !strings.HasSuffix(c.base.Path, "/") && !strings.HasPrefix(path, "/") && ref.Scheme == "" {
			// "items" against https://host/api means https://host/api/items, as users expect.
			b := *c.base
			b.Path += "/"
			u = b.ResolveReference(ref)
		}
	}
	if !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("steady: %q is not an absolute URL and the client has no BaseURL", c.red.URL(u))
	}
	if len(query) > 0 {
		q := u.Query()
		for k, vs := range query {
			for _, v := range vs {
				q.Add(k, v)
			}
		}
		u.RawQuery = q.Encode()
	}
	return u, nil
}

// newRequest builds a GET-style request (no body) for path and query with
// ctx. The resolved URL is used as it is, not printed and parsed again, and
// the User-Agent is set here, so the user-agent layer has nothing to copy.
func (c *Client) newRequest(ctx context.Context, method, path string, query url.Values) (*http.Request, error) {
	u, err := c.resolve(path, query)
	if err != nil {
		return nil, err
	}
	u.Host = strings.TrimSuffix(u.Host, ":") // as http.NewRequest does with "http://host:/x"
	req := &http.Request{
		Method:     method,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     http.Header{"User-Agent": c.uaValue, "Accept": acceptJSON},
		Host:       u.Host,
	}
	return req.WithContext(ctx), nil
}

// acceptJSON is the Accept header of GetJSON and walks. Header values are
// shared, never written in place: net/http and steady's layers replace a
// header's slice, they do not modify it.
var acceptJSON = []string{"application/json"}

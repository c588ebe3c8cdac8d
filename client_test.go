package steady_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

const secret = "KEY-7f3a9c21-do-not-leak"

func fast() retry.Policy {
	return retry.Policy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}
}

func newClient(t *testing.T, opt steady.Options) *steady.Client {
	t.Helper()
	c, err := steady.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	// Every key a test configures is checked on the wire and in its texts.
	wiretest.For(t).Key(opt.Keys...)
	return c
}

func TestNewRejectsBadOptions(t *testing.T) {
	cases := []struct {
		name string
		opt  steady.Options
		want string
	}{
		{"relative base URL", steady.Options{BaseURL: "/api"}, "BaseURL"},
		{"ftp base URL", steady.Options{BaseURL: "ftp://x/"}, "BaseURL"},
		{"key without hosts", steady.Options{Keys: []credentials.Key{{Header: "X-Api-Key", Value: secret}}}, "Keys[0]"},
		{"bad policy", steady.Options{Policy: retry.Policy{MaxAttempts: -1}}, "MaxAttempts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := steady.New(c.opt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v, want an error naming %s", err, c.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error %q leaks the key", err)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("MYAPI_RETRIES", "ten")
	_, err := steady.FromEnv("MYAPI", steady.Options{})
	var ce *config.ConfigurationError
	if !errors.As(err, &ce) || !errors.Is(err, config.ErrConfiguration) || !strings.Contains(err.Error(), "MYAPI_RETRIES") {
		t.Fatalf("FromEnv: %v, want a ConfigurationError naming MYAPI_RETRIES", err)
	}

	t.Setenv("MYAPI_RETRIES", "0")
	t.Setenv("MYAPI_CONCURRENT", "3")
	t.Setenv("MYAPI_API_KEY", secret)
	c, err := steady.FromEnv("MYAPI", steady.Options{Keys: []credentials.Key{{Header: "X-Api-Key", Hosts: []string{"api.example.gov"}}}})
	if err != nil {
		t.Fatal(err)
	}
	o := c.Options()
	if o.Policy.MaxAttempts != 1 || o.Concurrency != 3 || o.Keys[0].Value != secret {
		t.Errorf("options from env: attempts %d, concurrency %d, key set %v", o.Policy.MaxAttempts, o.Concurrency, o.Keys[0].Value == secret)
	}

	_, err = steady.FromEnv("MYAPI", steady.Options{})
	if err == nil || !strings.Contains(err.Error(), "MYAPI_API_KEY") || strings.Contains(err.Error(), secret) {
		t.Fatalf("a key with nowhere to go: %v, want an error naming the variable", err)
	}
}

func TestStatusErrors(t *testing.T) {
	var hits sync.Map
	srv := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := hits.LoadOrStore(r.URL.Path, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		w.Header().Set("X-Request-Id", "req-42")
		switch r.URL.Path {
		case "/missing":
			w.WriteHeader(404)
			io.WriteString(w, `{"error":"no such item"}`)
		case "/busy":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(429)
		case "/secondary":
			w.Header().Set("Retry-After", "3600")
			w.Header().Set("X-RateLimit-Remaining", "4990")
			w.WriteHeader(403)
		case "/blocked":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(403)
		case "/forbidden":
			w.WriteHeader(403)
		case "/down":
			w.WriteHeader(503)
		case "/long":
			w.WriteHeader(414)
		case "/echo":
			w.WriteHeader(400)
			io.WriteString(w, "bad request: "+r.Header.Get("X-Api-Key"))
		}
	}))
	defer srv.Close()
	c := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast(),
		Keys: []credentials.Key{{Header: "X-Api-Key", Value: secret, Hosts: []string{"http://" + srv.Listener.Addr().String()}}}})
	ctx := context.Background()

	err := c.GetJSON(ctx, "/missing", nil, new(any))
	var se *steady.StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 || se.RequestID != "req-42" || se.Excerpt != `{"error":"no such item"}` || se.Retryable() || se.Attempts != 1 {
		t.Errorf("404: %#v", err)
	}

	err = c.GetJSON(ctx, "/busy", nil, new(any))
	var rl *steady.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter() != time.Hour || !errors.Is(err, retry.ErrRetryAfter) || !rl.Retryable() {
		t.Errorf("429 beyond the cap: %v", err)
	}

	err = c.GetJSON(ctx, "/secondary", nil, new(any))
	if !errors.As(err, &rl) || rl.StatusCode != 403 || rl.RetryAfter() != time.Hour || !errors.Is(err, retry.ErrRetryAfter) {
		t.Errorf("403 rate limit beyond the cap: %v", err)
	}
	err = c.GetJSON(ctx, "/blocked", nil, new(any))
	if errors.As(err, &rl) || !errors.As(err, &se) || se.StatusCode != 403 || se.Attempts != 1 {
		t.Errorf("a firewall's 403 with Retry-After and no rate-limit field: %#v", err)
	}
	err = c.GetJSON(ctx, "/forbidden", nil, new(any))
	if errors.As(err, &rl) || !errors.As(err, &se) || se.StatusCode != 403 || se.Attempts != 1 {
		t.Errorf("plain 403: %#v", err)
	}

	err = c.GetJSON(ctx, "/down", nil, new(any))
	if !errors.As(err, &se) || se.StatusCode != 503 || se.Attempts != 3 || !errors.Is(err, retry.ErrExhausted) || !se.Retryable() {
		t.Errorf("503: %v", err)
	}
	if !strings.Contains(err.Error(), "after 3 attempts (attempts exhausted)") {
		t.Errorf("503 text %q does not say attempts and reason", err)
	}

	err = c.GetJSON(ctx, "/long", nil, new(any))
	var tl *steady.TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "chunk.Plan") {
		t.Errorf("414: %v", err)
	}

	err = c.GetJSON(ctx, "/echo", nil, new(any))
	if !errors.As(err, &se) || strings.Contains(se.Excerpt, secret) || !strings.Contains(se.Excerpt, credentials.Redacted) {
		t.Errorf("an echoed key must be redacted from the excerpt: %q", se.Excerpt)
	}
}

func TestGetJSONDecodes(t *testing.T) {
	srv := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/html" {
			io.WriteString(w, "<html>oops</html>")
			return
		}
		fmt.Fprintf(w, `{"q":%q}`, r.URL.Query().Get("q"))
	}))
	defer srv.Close()
	c := newClient(t, steady.Options{BaseURL: srv.URL + "/api"})
	var v struct{ Q string }
	if err := c.GetJSON(context.Background(), "items", url.Values{"q": {"a b"}}, &v); err != nil || v.Q != "a b" {
		t.Fatalf("GetJSON = %v, %+v", err, v)
	}
	err := c.GetJSON(context.Background(), "html", nil, &v)
	var de *steady.DecodeError
	if !errors.As(err, &de) || de.Offset != 1 || !strings.Contains(de.URL, "/api/html") {
		t.Fatalf("HTML body: %v, want a DecodeError at byte 1 naming the URL", err)
	}
	err = c.GetJSON(context.Background(), "items", url.Values{"api_key": {secret}}, &v)
	var cpe *credentials.CredentialParamError
	if !errors.As(err, &cpe) || strings.Contains(err.Error(), secret) {
		t.Fatalf("credential in query: %v, want a CredentialParamError", err)
	}
}

func TestWithSharesPoolAndChangesPolicy(t *testing.T) {
	var n atomic.Int32
	srv := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(503)
	}))
	defer srv.Close()
	c := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast()})
	once := c.With(func(o *steady.Options) { o.Policy.MaxAttempts = 1 })
	if once.Err() != nil {
		t.Fatal(once.Err())
	}
	_ = once.GetJSON(context.Background(), "/", nil, new(any))
	if n.Load() != 1 {
		t.Errorf("With(MaxAttempts 1) made %d attempts", n.Load())
	}
	_ = c.GetJSON(context.Background(), "/", nil, new(any))
	if n.Load() != 4 {
		t.Errorf("the original client made %d attempts, want 3", n.Load()-1)
	}
	if once.HTTP().Transport == c.HTTP().Transport {
		t.Errorf("the copy shares the retry layer; it should have its own policy")
	}
	bad := c.With(func(o *steady.Options) { o.Policy.MaxAttempts = -1 })
	err := bad.GetJSON(context.Background(), "/", nil, new(any))
	if bad.Err() == nil || err == nil || !strings.Contains(err.Error(), "MaxAttempts") || n.Load() != 4 {
		t.Errorf("invalid copy: Err %v, request error %v, %d requests; want the policy error before sending", bad.Err(), err, n.Load())
	}
}

func TestKeyGoesOnlyToItsHost(t *testing.T) {
	type seen struct {
		host string
		key  string
	}
	var mu sync.Mutex
	var log []seen
	var foreignURL string
	srv := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		log = append(log, seen{r.Host, r.Header.Get("X-Api-Key")})
		mu.Unlock()
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, foreignURL, http.StatusFound)
			return
		}
		io.WriteString(w, "{}")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":"):]
	foreignURL = "http://localhost" + port + "/landing" // the same server under another host name
	c := newClient(t, steady.Options{BaseURL: srv.URL, Keys: []credentials.Key{{Header: "X-Api-Key", Value: secret, Hosts: []string{"http://127.0.0.1" + port}}}})
	if err := c.GetJSON(context.Background(), "/hop", nil, new(any)); err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].key != secret || log[1].key != "" || !strings.HasPrefix(log[1].host, "localhost") {
		t.Fatalf("requests seen: %+v; want the key on the first hop only", log)
	}
}

func TestPagesThroughTheStack(t *testing.T) {
	var fails atomic.Int32
	var srv *httptest.Server
	srv = wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		if page == "2" && fails.Add(1) == 1 {
			w.WriteHeader(503) // a blip the retry layer rides out
			return
		}
		if page == "" {
			page = "1"
		}
		if page != "3" {
			w.Header().Set("Link", fmt.Sprintf(`<%s/items?page=%d>; rel="next"`, srv.URL, int(page[0]-'0')+1))
		}
		fmt.Fprintf(w, `[{"p":%s},{"p":%s}]`, page, page)
	}))
	defer srv.Close()
	var pages atomic.Int32
	c := newClient(t, steady.Options{BaseURL: srv.URL, Policy: fast(),
		Reporter: event.ReporterFunc(func(e event.Event) {
			if e.Kind == event.PageReceived {
				pages.Add(1)
			}
		})})
	w, err := c.Walk("/items", nil, paginate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := 0
	for p, err := range w.All(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		items += p.Items.Len()
	}
	sum := w.Summary()
	if items != 6 || sum.Pages != 3 || sum.Retries != 1 || !sum.Complete || pages.Load() != 3 {
		t.Fatalf("items %d, summary %+v, page events %d", items, sum, pages.Load())
	}
}

func TestRedirectDowngradeRefused(t *testing.T) {
	plain := wiretest.For(t).Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") }))
	defer plain.Close()
	tls := wiretest.For(t).TLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/x", http.StatusFound)
	}))
	defer tls.Close()
	c := newClient(t, steady.Options{Transport: tls.Client().Transport})
	err := c.GetJSON(context.Background(), tls.URL+"/start", nil, new(any))
	if err == nil || !strings.Contains(err.Error(), "from https to http") {
		t.Fatalf("downgrade redirect: %v, want it refused", err)
	}
}

// Package wiretest is the suite-wide check that no key leaves its host and
// no secret reaches a text: the invariant of ARCHITECTURE decision 17 for
// keys, as goleak is for goroutines. It is imported by tests only.
//
// A test gets its [Watch] with [For]. The keys the test configures are
// registered with [Watch.Key] (the packages' client helpers do it), the
// test servers are made with [Watch.Server] or wrapped with
// [Watch.Handler], and every error, event, log line, output stream and
// directory the test produced is handed to [Watch.Err], [Watch.Reporter],
// [Watch.Writer] and [Watch.Dir]. When the test ends the Watch fails it if
// a request that reached a watched server, on any hop (a redirect, a next
// link, a retry, a resume), went to an origin that does not accept a key
// and carried that key anywhere: the request line, any header (Referer
// included), the body. It fails it too if any text holds any secret, in
// any form a [credentials.Redactor] looks for (as written, escaped, inside
// base64) or in any escape set of [Forms], checked on their own, also
// inside the string escapes of JSON.
//
// [Main] runs a package's tests from its TestMain and fails the run if a
// Watch saw a leak that no test reported, so a check cannot be lost.
package wiretest

import (
	"bytes"
	"fmt"
	"go/token"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
)

// maxBody bounds what is kept of one request's body.
const maxBody = 1 << 20

// A Watch sees one test's requests and texts. Its methods are safe for
// concurrent use.
type Watch struct {
	t testing.TB

	mu      sync.Mutex
	keys    []credentials.Key
	secrets []string // text-only secrets
	reqs    []Request
	texts   []text
	dirs    []string
	checked bool
}

// A Request is what a watched server received, as the wire carried it.
type Request struct {
	Origin string // scheme://host as the client addressed it (Host header)
	Line   string // method and request URI
	Header http.Header
	Body   []byte
}

type text struct{ where, s string }

var (
	watchesMu sync.Mutex
	watches   = map[testing.TB]*Watch{}
	unchecked atomic.Int64 // watches whose test ended without a check
	requests  atomic.Int64 // requests seen in the whole run
	leaks     atomic.Int64 // leaks reported in the whole run
)

// For returns t's Watch, making it on first use; every helper of a test
// that asks gets the same one. Its check runs when t ends.
func For(t testing.TB) *Watch {
	watchesMu.Lock()
	defer watchesMu.Unlock()
	if w, ok := watches[t]; ok {
		return w
	}
	w := &Watch{t: t}
	watches[t] = w
	unchecked.Add(1)
	t.Cleanup(func() {
		w.Check()
		watchesMu.Lock()
		delete(watches, t)
		watchesMu.Unlock()
	})
	return w
}

// Key registers keys: each may reach the origins it accepts and no other,
// and appear in no text.
func (w *Watch) Key(keys ...credentials.Key) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		if k.Value != "" {
			w.keys = append(w.keys, k)
		}
	}
}

// Secret registers values that must appear in no text; on the wire they
// are not checked (a password sent as userinfo to its own host, say).
func (w *Watch) Secret(values ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range values {
		if v != "" {
			w.secrets = append(w.secrets, v)
		}
	}
}

// Handler returns h with every request it receives recorded.
func (w *Watch) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		rec := &Request{Origin: scheme + "://" + r.Host, Line: r.Method + " " + r.RequestURI, Header: r.Header.Clone()}
		var body bytes.Buffer
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &teeBody{r: r.Body, buf: &body}
		}
		defer func() {
			if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
				// What the handler left unread went over the wire too.
				io.Copy(io.Discard, io.LimitReader(r.Body, maxBody))
			}
			rec.Body = body.Bytes()
			w.mu.Lock()
			w.reqs = append(w.reqs, *rec)
			w.mu.Unlock()
		}()
		h.ServeHTTP(rw, r)
	})
}

type teeBody struct {
	r   io.ReadCloser
	buf *bytes.Buffer
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if room := maxBody - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(n, room)])
	}
	return n, err
}

func (b *teeBody) Close() error { return b.r.Close() }

// Server starts an httptest server for h, watched, closed when the test
// ends.
func (w *Watch) Server(h http.Handler) *httptest.Server {
	s := httptest.NewServer(w.Handler(h))
	w.t.Cleanup(s.Close)
	return s
}

// TLSServer is [Watch.Server] over https.
func (w *Watch) TLSServer(h http.Handler) *httptest.Server {
	s := httptest.NewTLSServer(w.Handler(h))
	w.t.Cleanup(s.Close)
	return s
}

// Text records a text the test produced.
func (w *Watch) Text(where, s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text{where, s})
}

// Err records err as a caller could print it (see [ErrTexts]).
func (w *Watch) Err(where string, err error) { ErrTexts(where, err, w.Text) }

// ErrTexts hands add every text a caller could print of err: its text, %+v
// and %#v, and the same for every error of its chain whose type is
// exported, which a caller reaches with errors.As (a *url.Error, a
// *retry.Error, ...). Each text's where is where, then the error's type
// for one of the chain.
func ErrTexts(where string, err error, add func(where, text string)) {
	for i, e := range chain(err) {
		at := where
		if i > 0 {
			if !exported(e) {
				continue
			}
			at = fmt.Sprintf("%s > %T", where, e)
		}
		add(at+" Error()", e.Error())
		add(at+" %+v", fmt.Sprintf("%+v", e))
		add(at+" %#v", fmt.Sprintf("%#v", e))
	}
}

// chain returns err and every error it wraps, depth first, at most 64.
func chain(err error) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		if e == nil || len(out) >= 64 {
			return
		}
		if v := reflect.ValueOf(e); v.Kind() == reflect.Pointer && v.IsNil() {
			return
		}
		out = append(out, e)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				walk(inner)
			}
		}
	}
	walk(err)
	return out
}

// exported reports whether errors.As can name e's type.
func exported(e error) bool {
	t := reflect.TypeOf(e)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name() != "" && token.IsExported(t.Name())
}

// Reporter returns a reporter that records every event, printed with %+v,
// and passes it to next (nil: none).
func (w *Watch) Reporter(next event.Reporter) event.Reporter {
	return event.ReporterFunc(func(e event.Event) {
		w.Text("event "+e.Kind.String(), fmt.Sprintf("%+v", e))
		if next != nil {
			next.Report(e)
		}
	})
}

// Writer returns a writer whose every byte is checked when the test ends,
// for a program's stdout and stderr or a log.
func (w *Watch) Writer(where string) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		w.Text(where, string(p))
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Dir has every regular file under dir read and checked when the test
// ends: the files a program wrote. They are read by a cleanup registered
// here, which runs before that of a t.TempDir made earlier removes them.
func (w *Watch) Dir(dir string) {
	w.mu.Lock()
	w.dirs = append(w.dirs, dir)
	w.mu.Unlock()
	w.t.Cleanup(func() { w.readDir(dir) })
}

// readDir records the text of every regular file under dir.
func (w *Watch) readDir(dir string) {
	w.mu.Lock()
	watched := slices.Contains(w.dirs, dir)
	w.mu.Unlock()
	if !watched {
		return // forgotten
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if data, err := os.ReadFile(path); err == nil {
			w.Text("file "+path, string(data))
		}
		return nil
	})
}

// Requests returns what the watched servers received so far.
func (w *Watch) Requests() []Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Request(nil), w.reqs...)
}

// Leak is one finding of [Watch.Findings].
type Leak struct {
	Where string // "GET /x to http://127.0.0.1:1234, header Referer", or a text's name
	Text  string // the text that held it, with the secret marked
}

// Findings returns every leak seen so far, without failing the test.
func (w *Watch) Findings() []Leak {
	w.mu.Lock()
	keys := append([]credentials.Key(nil), w.keys...)
	secrets := append([]string(nil), w.secrets...)
	reqs := append([]Request(nil), w.reqs...)
	texts := append([]text(nil), w.texts...)
	dirs := append([]string(nil), w.dirs...)
	w.mu.Unlock()

	all := secrets
	for _, k := range keys {
		all = append(all, k.Value)
	}
	anySecret := credentials.NewRedactor(all...)
	var out []Leak
	mark := func(r *credentials.Redactor, s string) string {
		return excerpt(strings.ReplaceAll(r.String(s), credentials.Redacted, "«KEY»"))
	}
	for _, r := range reqs {
		u, err := url.Parse(r.Origin)
		if err != nil {
			continue
		}
		for _, k := range keys {
			if k.Accepts(u) {
				continue
			}
			red := credentials.NewRedactor(k.Value)
			at := r.Line + " to " + r.Origin + ", "
			if holds(red, r.Line, k.Value) {
				out = append(out, Leak{at + "request line", mark(red, unescape(r.Line))})
			}
			for name, vv := range r.Header {
				for _, v := range vv {
					if holds(red, v, k.Value) {
						out = append(out, Leak{at + "header " + name, mark(red, v)})
					}
				}
			}
			if holds(red, string(r.Body), k.Value) {
				out = append(out, Leak{at + "body", mark(red, string(r.Body))})
			}
		}
	}
	if anySecret == nil {
		return out
	}
	for _, t := range texts {
		if holds(anySecret, t.s, all...) {
			out = append(out, Leak{t.where, mark(anySecret, t.s)})
		}
	}
	for _, dir := range dirs {
		// Files still there now; those a cleanup removed were read by it.
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err == nil && holds(anySecret, string(data), all...) && !w.hasText("file "+path, string(data)) {
				out = append(out, Leak{"file " + path, mark(anySecret, string(data))})
			}
			return nil
		})
	}
	return out
}

// Check fails the test for every finding. It runs when the test ends; a
// test may call it earlier.
func (w *Watch) Check() {
	w.t.Helper()
	found := w.Findings()
	w.mu.Lock()
	if !w.checked {
		w.checked = true
		unchecked.Add(-1)
	}
	w.mu.Unlock()
	for _, l := range found {
		leaks.Add(1)
		w.t.Errorf("wiretest: a secret leaked: %s:\n%s", l.Where, l.Text)
	}
}

// holds reports whether s holds one of secrets in any form red looks for,
// or in one of the escape sets of [Forms], checked apart from the redactor
// so that a gap in it cannot hide a leak, or decoded once as a query; in s
// as it is, and with its JSON string escapes decoded.
func holds(red *credentials.Redactor, s string, secrets ...string) bool {
	for _, t := range []string{s, jsonUnescape(s)} {
		if red.Contains(t) || red.Contains(unescape(t)) {
			return true
		}
		for _, v := range secrets {
			for _, f := range Forms(v) {
				if strings.Contains(t, f) {
					return true
				}
			}
		}
	}
	return false
}

// jsonUnescape decodes the escapes of JSON strings wherever they stand in
// s, so that a secret in a JSON file or body is seen as written, though
// encoding/json writes its &, < and > as \u0026, \u003c and \u003e.
func jsonUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		c := s[i+1]
		if c == 'u' && i+6 <= len(s) {
			if r, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
				b.WriteRune(rune(r))
				i += 5
				continue
			}
		}
		if d, ok := jsonEscapes[c]; ok {
			b.WriteByte(d)
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// jsonEscapes are JSON's one-letter escapes and what they stand for.
var jsonEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}

// Forms returns v in each common escape set a server or a client may
// write it in, by name: Go's two escapes, RFC 3986 (every byte but the
// unreserved escaped), Python's quote (safe='/'), form encoding ('+' for
// a space), JavaScript's encodeURIComponent, each in upper and lower hex,
// every byte escaped, and RFC 3986 escaped twice.
func Forms(v string) map[string]string {
	unreserved := func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0
	}
	pyQuote := func(c byte) bool { return unreserved(c) || c == '/' }
	js := func(c byte) bool { return unreserved(c) || strings.IndexByte("!*'()", c) >= 0 }
	none := func(byte) bool { return false }
	forms := map[string]string{
		"Go path escape":      url.PathEscape(v),
		"Go query escape":     url.QueryEscape(v),
		"every byte escaped":  escapeExcept(v, none, false, false),
		"RFC 3986 twice":      url.PathEscape(escapeExcept(v, unreserved, false, false)),
		"Python quote twice":  escapeExcept(escapeExcept(v, pyQuote, false, false), pyQuote, false, false),
		"form encoding twice": url.QueryEscape(escapeExcept(v, unreserved, false, true)),
	}
	for _, lower := range []bool{false, true} {
		hex := " upper hex"
		if lower {
			hex = " lower hex"
		}
		forms["RFC 3986"+hex] = escapeExcept(v, unreserved, lower, false)
		forms["Python quote"+hex] = escapeExcept(v, pyQuote, lower, false)
		forms["form encoding"+hex] = escapeExcept(v, unreserved, lower, true)
		forms["encodeURIComponent"+hex] = escapeExcept(v, js, lower, false)
	}
	return forms
}

// escapeExcept percent-escapes every byte of s that keep does not report,
// in lower or upper hex, and a space as '+' when plus is set.
func escapeExcept(s string, keep func(byte) bool, lower, plus bool) string {
	format := "%%%02X"
	if lower {
		format = "%%%02x"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case plus && c == ' ':
			b.WriteByte('+')
		case keep(c):
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, format, c)
		}
	}
	return b.String()
}

func unescape(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

// excerpt shows the part of s around the first marked secret.
func excerpt(s string) string {
	i := strings.Index(s, "«KEY»")
	if i < 0 || len(s) < 400 {
		return s
	}
	return "..." + s[max(0, i-200):min(len(s), i+200)] + "..."
}

// M is what [Main] returns for goleak.VerifyTestMain.
type M struct{ m *testing.M }

// Main wraps m for a package's TestMain:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(wiretest.Main(m)) }
//
// Run runs the tests and then fails the run if a Watch was never checked
// (its test's cleanups did not run) or leaks were found, so that a leak
// cannot go unreported whatever a test does with its failures.
func Main(m *testing.M) M { return M{m} }

// Run runs the tests, then the run-wide checks.
func (m M) Run() int {
	code := m.m.Run()
	if n := unchecked.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "wiretest: %d watches were never checked\n", n)
		code = max(code, 1)
	}
	if n := leaks.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "wiretest: %d secrets leaked on the wire or into a text (%d requests watched)\n", n, requests.Load())
		code = max(code, 1)
	}
	return code
}

// hasText reports whether the text was recorded already under where.
func (w *Watch) hasText(where, s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.texts {
		if t.where == where && t.s == s {
			return true
		}
	}
	return false
}

// Forget drops what the watch recorded, for a test whose subject is a leak
// it planted on purpose.
func (w *Watch) Forget() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reqs, w.texts, w.dirs = nil, nil, nil
}

package credentials

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
)

// A Redactor hides a fixed set of secrets in the text steady produces.
// [RedactURL] hides values by the names of their parameters; a Redactor
// hides the values themselves, wherever they are: in a parameter with an
// innocent name (appid, hapikey), in a next link or a body a server echoed,
// in an error a lower layer wrote. Each secret is looked for as written,
// inside base64 (the Basic Authorization a server echoes back), and in any
// percent-escaped form: the text is unescaped as a server would read it
// (either hex case, '+' as a space or not, up to two layers deep), so RFC
// 3986, Python's quote, form encoding and their kin are all found, and
// the escaped text of the secret is replaced by [Redacted].
//
// A client makes one Redactor from its keys and puts every error, event,
// log line and file it writes through it. The nil Redactor hides nothing by
// value; its URL methods still redact by name. A Redactor is safe for
// concurrent use.
type Redactor struct {
	needles  []string          // the secrets as written and escaped, longest first
	plain    *strings.Replacer // replaces each needle
	runs     []string          // their base64 runs (see base64Runs)
	secrets  []string          // as given, for With
	shortest int               // the length of the shortest needle or run
}

// minBase64 is the shortest base64 run of a secret that is looked for: a
// shorter one would turn up by chance in ordinary text. A secret of 7 bytes
// or more is found at every offset; one of 6, at one offset in three.
const minBase64 = 8

// NewRedactor returns a Redactor for secrets; empty strings are ignored,
// and with none left the result is nil.
func NewRedactor(secrets ...string) *Redactor {
	var needles, runs, kept []string
	for _, v := range secrets {
		if v == "" {
			continue
		}
		kept = append(kept, v)
		needles = append(needles, v, url.QueryEscape(v), url.PathEscape(v))
		runs = append(runs, base64Runs(v)...)
	}
	if len(needles) == 0 {
		return nil
	}
	// Longest first, so that at any position the longest form is replaced
	// whole (the Replacer tries its pairs in order).
	slices.SortFunc(needles, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	needles = slices.Compact(needles)
	pairs := make([]string, 0, 2*len(needles))
	for _, n := range needles {
		pairs = append(pairs, n, Redacted)
	}
	slices.Sort(runs)
	r := &Redactor{needles: needles, plain: strings.NewReplacer(pairs...), runs: slices.Compact(runs), secrets: kept}
	r.shortest = len(needles[len(needles)-1])
	for _, run := range r.runs {
		r.shortest = min(r.shortest, len(run))
	}
	return r
}

// With returns a Redactor for r's secrets and more, such as the password of
// one request's userinfo. r is not changed.
func (r *Redactor) With(secrets ...string) *Redactor {
	if len(secrets) == 0 {
		return r
	}
	if r == nil {
		return NewRedactor(secrets...)
	}
	return NewRedactor(append(slices.Clone(r.secrets), secrets...)...)
}

// base64Runs returns the base64 text that v turns into wherever it stands
// in what is encoded: a Basic Authorization value is the base64 of
// "user:password", and the secret may be either half. Base64 encodes three
// bytes as four characters, so v's encoding depends on its offset modulo 3
// and on its neighbours only at its two ends; the characters in between,
// one run per offset, are the same whatever surrounds v. Both the standard
// and the URL alphabet are covered; padding does not matter.
func base64Runs(v string) []string {
	var runs []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := range 3 {
			out := enc.EncodeToString(append(make([]byte, k, k+len(v)), v...))
			// v fills bits [8k, 8k+8·len(v)); character j holds bits
			// [6j, 6j+6).
			from, to := (8*k+5)/6, (8*k+8*len(v))/6
			if to-from >= minBase64 {
				runs = append(runs, out[from:to])
			}
		}
	}
	return runs
}

// Contains reports whether s holds any of r's secrets in any form looked
// for.
func (r *Redactor) Contains(s string) bool {
	if r == nil || len(s) < r.shortest {
		return false
	}
	for _, n := range r.needles {
		if strings.Contains(s, n) {
			return true
		}
	}
	for _, run := range r.runs {
		if strings.Contains(s, run) {
			return true
		}
	}
	found := false
	unescapings(s, func(d string, _ []int) bool {
		found = r.containsPlain(d)
		return !found
	})
	return found
}

// containsPlain reports whether s holds a secret as written or inside
// base64.
func (r *Redactor) containsPlain(s string) bool {
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			return true
		}
	}
	for _, run := range r.runs {
		if strings.Contains(s, run) {
			return true
		}
	}
	return false
}

// longest returns the length of the longest form looked for, so that a
// reader can hold back enough bytes to see a secret split between reads.
func (r *Redactor) longest() int {
	n := 0
	if r == nil {
		return 0
	}
	for _, s := range r.needles {
		n = max(n, len(s))
	}
	for _, s := range r.runs {
		n = max(n, len(s))
	}
	// Escaped twice, a byte takes five ("%252B").
	for _, v := range r.secrets {
		n = max(n, 5*len(v))
	}
	return n
}

// String returns s with every secret, in any form looked for, replaced by
// [Redacted]. It changes nothing else; use [Redactor.Text] for text a
// server supplied.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	s = r.plain.Replace(s)
	for _, run := range r.runs {
		s = redactBase64(s, run)
	}
	return redactEscaped(s, r.secrets)
}

// Text returns server-supplied text (a status line, a body excerpt, a
// header value, a link) fit for an error or an event: its secrets replaced
// and its control characters escaped ([Escape]).
func (r *Redactor) Text(s string) string { return Escape(r.String(s)) }

// URL returns u as text fit for an error, an event or a file: redacted by
// parameter name ([RedactURL]) and by value, its control characters
// escaped. A nil URL gives "".
func (r *Redactor) URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	return Escape(r.String(RedactURL(u)))
}

// URLString is [Redactor.URL] for a URL as text; text that does not parse
// gives a fixed placeholder, as [RedactURLString] does.
func (r *Redactor) URLString(s string) string { return Escape(r.String(RedactURLString(s))) }

// redactBase64 replaces each occurrence of run in s, and the base64 text it
// stands in, so that neither the user name beside a key in a Basic value
// nor the bits of the key's first and last bytes are left.
func redactBase64(s, run string) string {
	i := strings.Index(s, run)
	if i < 0 {
		return s
	}
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i >= 0 {
		from, to := done+i, done+i+len(run)
		for from > done && isBase64(s[from-1]) {
			from--
		}
		for to < len(s) && isBase64(s[to]) {
			to++
		}
		for pad := 0; pad < 2 && to < len(s) && s[to] == '='; pad++ {
			to++
		}
		b.WriteString(s[done:from])
		b.WriteString(Redacted)
		done = to
		i = strings.Index(s[done:], run)
	}
	b.WriteString(s[done:])
	return b.String()
}

// isBase64 reports whether c is in the standard or the URL base64 alphabet.
func isBase64(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '+' || c == '/' || c == '-' || c == '_'
}

// Error returns err fit for a caller to print: every *url.Error at its head
// rebuilt around a URL redacted by name and value (net/http quotes the raw
// URL it requested, a next link or a redirect's Location, key and all), and
// any secret left in the text of the rest hidden by a wrapper. errors.Is and
// errors.As still reach the original cause, and Timeout and Temporary
// answer for it. The nil Redactor still rebuilds a *url.Error.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	if ue, ok := err.(*url.Error); ok {
		return &url.Error{Op: ue.Op, URL: r.URLString(ue.URL), Err: r.Error(ue.Err)}
	}
	if r == nil {
		return err
	}
	t := err.Error()
	if red := r.String(t); red != t {
		return &redactedError{text: red, err: err}
	}
	return err
}

// redactedError is an error whose text had a secret in it: Error gives the
// text with the secret replaced, Unwrap the original.
type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// Timeout and Temporary answer for the original, since [url.Error] asks
// its own Err directly rather than through the chain.
func (e *redactedError) Timeout() bool {
	t, ok := e.err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}

func (e *redactedError) Temporary() bool {
	t, ok := e.err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// KeyFree returns u without its userinfo and without every query parameter
// whose value, as written or decoded, holds one of r's secrets; the other
// parameters keep their order and encoding. It returns u itself when there
// is nothing to remove, so a caller can tell by comparing pointers.
func (r *Redactor) KeyFree(u *url.URL) *url.URL {
	return keyFree(u, func(p string) bool { return r.Contains(p) || r.Contains(unescapeParam(p)) })
}

// keyFree returns u without its userinfo and the raw parameters drop
// reports, or u itself when there are none.
func keyFree(u *url.URL, drop func(raw string) bool) *url.URL {
	if u == nil {
		return nil
	}
	changed := u.User != nil
	for i := 0; i < len(u.RawQuery) && !changed; {
		end := paramEnd(u.RawQuery, i)
		changed = drop(u.RawQuery[i:end])
		i = end + 1
	}
	if !changed {
		return u
	}
	c := *u
	c.User = nil
	c.RawQuery = filterQuery(u.RawQuery, drop)
	c.ForceQuery = false
	return &c
}

// Secrets are values that must appear in no text, such as the API keys an
// options struct hands to a layer for its [Redactor]. Printed with any verb
// or through log/slog they show only how many there are, so that printing
// the struct that holds them, or an error that keeps that struct, shows
// none.
type Secrets []string

// String describes s without any of its values.
func (s Secrets) String() string { return fmt.Sprintf("credentials.Secrets(%d %s)", len(s), Redacted) }

// Format prints [Secrets.String] whatever the verb.
func (s Secrets) Format(f fmt.State, verb rune) { io.WriteString(f, s.String()) }

// LogValue keeps the values out of log/slog output.
func (s Secrets) LogValue() slog.Value { return slog.StringValue(s.String()) }

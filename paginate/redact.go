package paginate

import (
	"cmp"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"

	"github.com/steadyhttp/steady/credentials"
)

// redactor hides a walk's secrets ([Options.Secrets]) in the text it puts
// into errors and events. [credentials.RedactURL] already hides values by
// the names of their parameters; a redactor hides the values themselves,
// wherever they are: in a parameter with an innocent name, in a body a
// server echoed, in an error a lower layer wrote. The nil redactor (no
// secrets) changes no text.
type redactor struct {
	plain *strings.Replacer // the secrets as written and escaped
	runs  []string          // and their base64 runs (see base64Runs)
}

// minBase64 is the shortest base64 run of a secret that is looked for: a
// shorter one would turn up by chance in ordinary text. A secret of 7 bytes
// or more is found at every offset; one of 6, at one offset in three.
const minBase64 = 8

func newRedactor(secrets []string) *redactor {
	var needles, runs []string
	for _, v := range secrets {
		if v == "" {
			continue
		}
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
		pairs = append(pairs, n, credentials.Redacted)
	}
	slices.Sort(runs)
	return &redactor{plain: strings.NewReplacer(pairs...), runs: slices.Compact(runs)}
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

// text returns s with every secret, in any form looked for, replaced.
func (r *redactor) text(s string) string {
	if r == nil || s == "" {
		return s
	}
	s = r.plain.Replace(s)
	for _, run := range r.runs {
		s = redactBase64(s, run)
	}
	return s
}

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
		b.WriteString(credentials.Redacted)
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

// urlText returns u redacted by parameter name and by secret.
func (r *redactor) urlText(u *url.URL) string {
	return r.text(credentials.RedactURL(u))
}

// cause returns err with every *url.Error at its head rebuilt around a
// redacted URL, and with any secret in the text of what is left hidden by
// a wrapper; errors.Is and errors.As still reach the original cause.
func (r *redactor) cause(err error) error {
	if err == nil {
		return nil
	}
	if ue, ok := err.(*url.Error); ok {
		// net/http quotes the raw URL it requested (a next link, a
		// redirect's Location), key and all; a caller printing the
		// *url.Error found with errors.As would show it.
		return &url.Error{Op: ue.Op, URL: r.text(credentials.RedactURLString(ue.URL)), Err: r.cause(ue.Err)}
	}
	if r == nil {
		return err
	}
	t := err.Error()
	if red := r.text(t); red != t {
		return &redactedError{text: red, err: err}
	}
	return err
}

// walkError hides secrets and raw URLs in an error a walk is about to
// yield: every field of an [*Error] that holds server text or a URL, and
// its cause.
func (r *redactor) walkError(err error) error {
	e, ok := err.(*Error)
	if !ok {
		return r.cause(err)
	}
	e.URL = r.text(e.URL)
	e.Link = r.text(e.Link)
	e.Host = r.text(e.Host)
	e.Excerpt = r.text(e.Excerpt)
	e.Detail = r.text(e.Detail)
	e.Err = r.cause(e.Err)
	return e
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

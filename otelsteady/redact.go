package otelsteady

import (
	"strings"

	"github.com/steadyhttp/steady/credentials"
)

// cleanText and cleanURL are the only ways recorded text passes. The
// events' URLs and error texts were redacted by the layer that made them;
// these add two guards, since telemetry leaves the process. In a text,
// every URL quoted is redacted again by parameter name: a lower layer may
// quote the URL as it was sent, after the credentials layer re-encoded its
// query, which the retry layer's own scrub (of the caller's URL as
// written) misses. In both, the client's key values are replaced wherever
// they appear. The events' URLs were redacted by name from the parsed URL
// and are not parsed again.
func (a *Adapter) cleanText(s string) string {
	if s == "" {
		return s
	}
	return a.cleanURL(redactQuotedURLs(s))
}

func (a *Adapter) cleanURL(s string) string { return a.redact.String(s) }

// redactQuotedURLs redacts each http or https URL in s, up to the first
// space, quote or angle bracket after it, or the start of another URL.
func redactQuotedURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	rest := s
	for {
		i := indexURL(rest)
		if i < 0 {
			break
		}
		end := i + strings.IndexAny(rest[i:]+" ", " \t\r\n\"'<>`")
		// A URL written inside another ("http://https://u:p@h/") would
		// hide its userinfo in the outer one's path: each starts anew.
		from := i + strings.Index(rest[i:], "://") + 3
		if j := indexURL(rest[from:end]); j >= 0 {
			end = from + j
		}
		b.WriteString(rest[:i])
		b.WriteString(credentials.RedactURLString(rest[i:end]))
		rest = rest[end:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(rest)
	return b.String()
}

// indexURL returns where the first http or https URL in s starts, or -1.
func indexURL(s string) int {
	best := -1
	for _, scheme := range [...]string{"http://", "https://", "HTTP://", "HTTPS://"} {
		if i := strings.Index(s, scheme); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

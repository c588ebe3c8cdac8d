package main

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/steadyhttp/steady"
)

// maxShownExcerpt bounds how much of an error response's body is shown: a
// server's message is a sentence or a small JSON object, and an HTML error
// page would otherwise fill the terminal.
const maxShownExcerpt = 300

// serverSaid is an error status with what the server said about it.
type serverSaid struct {
	err  error
	text string // escaped and bounded
}

func (e *serverSaid) Error() string { return e.err.Error() + "; the server said: " + e.text }
func (e *serverSaid) Unwrap() error { return e.err }

// withServerMessage adds to a status error the start of the body the
// server sent with it, the way curl shows an error page, so the reason a
// request was refused is not thrown away.
func withServerMessage(err error) error {
	var se *steady.StatusError
	if !errors.As(err, &se) || strings.TrimSpace(se.Excerpt) == "" {
		return err
	}
	return &serverSaid{err: err, text: excerptText(se.Excerpt, maxShownExcerpt)}
}

// excerptText renders an excerpt for one line of a terminal. The excerpt
// arrives escaped ([credentials.Escape]: no control, format or invalid byte
// is left in it), so the line breaks and tabs of a JSON message are the
// escapes \n, \r and \t: they and runs of spaces become one space, the text
// is cut to limit bytes without splitting a rune, and it is shown in
// quotes, its own quotes escaped.
func excerptText(s string, limit int) string {
	s = strings.Join(strings.Fields(whitespaceEscapes.Replace(s)), " ")
	cut := ""
	if len(s) > limit {
		n := limit
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		cut = " ... (" + strconv.Itoa(len(s)-n) + " more bytes)"
		s = s[:n]
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` + cut
}

var whitespaceEscapes = strings.NewReplacer(`\n`, " ", `\r`, " ", `\t`, " ")

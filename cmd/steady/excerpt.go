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

// excerptText renders server text for one line of a terminal: runs of
// white space become one space, the text is cut to limit bytes at a rune
// boundary, and it is quoted with every control, format (bidirectional
// overrides included) and invalid byte escaped, so a server cannot forge
// lines or move the cursor.
func excerptText(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	cut := ""
	if len(s) > limit {
		n := limit
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		cut = " ... (" + strconv.Itoa(len(s)-n) + " more bytes)"
		s = s[:n]
	}
	return strconv.QuoteToGraphic(s) + cut
}

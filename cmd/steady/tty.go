package main

import (
	"bytes"
	"io"
	"mime"
	"os"
	"strings"

	"golang.org/x/term"
)

// sniffBytes is how much of a body is looked at before it is written to a
// terminal.
const sniffBytes = 2 << 10

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// binaryBody says why a body must not go to a terminal, "" when it may
// (ADR 309): a Content-Type that is not text, or a NUL byte in its first
// sniffBytes. Binary written to a terminal can drive it as escapes can, and
// is never what the user meant to read; curl refuses it the same way.
func binaryBody(contentType string, head []byte) string {
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return "the body holds a NUL byte, so it is binary"
	}
	if contentType == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "its Content-Type is not one steady can read as text"
	}
	if textType(mt) {
		return ""
	}
	return "its Content-Type " + mt + " is not text"
}

// textType reports whether a media type is text meant for people or for
// a shell pipeline to read.
func textType(mt string) bool {
	if strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-ndjson", "application/jsonl", "application/yaml", "application/x-yaml",
		"application/x-www-form-urlencoded", "application/csv", "application/problem+json", "application/graphql",
		"application/sql", "application/toml":
		return true
	}
	return false
}

package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestBinaryBody(t *testing.T) {
	t.Parallel()
	text := []byte("hello\n")
	cases := []struct {
		name, contentType string
		head              []byte
		binary            bool
	}{
		{"json", "application/json; charset=utf-8", text, false},
		{"html", "text/html", text, false},
		{"problem", "application/problem+json", text, false},
		{"no type, text", "", text, false},
		{"no type, NUL", "", []byte("PK\x03\x04\x00\x00"), true},
		{"text type, NUL", "text/plain", append(bytes.Repeat([]byte("a"), 2000), 0), true},
		{"octet-stream", "application/octet-stream", text, true},
		{"image", "image/png", text, true},
		{"malformed type", "text/plain; ===", text, true},
	}
	for _, c := range cases {
		if got := binaryBody(c.contentType, c.head) != ""; got != c.binary {
			t.Errorf("%s: binary %v, want %v", c.name, got, c.binary)
		}
	}
}

// Not a terminal: a binary body goes to stdout as before.
func TestGetBinaryToPipe(t *testing.T) {
	srv := binaryServer(t)
	code, out, errText := cli(t, "get", "-q", srv.URL)
	if code != exitOK || out != binaryPayload {
		t.Fatalf("exit %d, %q, %s", code, out, errText)
	}
}

const binaryPayload = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x1b]0;pwned\x07"

func binaryServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/text" {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "just text\n")
			return
		}
		w.Header().Set("Content-Type", "image/png")
		io.WriteString(w, binaryPayload)
	}))
	t.Cleanup(srv.Close)
	return srv
}

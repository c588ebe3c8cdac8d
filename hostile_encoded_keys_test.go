package steady_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
)

// reservedKey has characters every escape set treats differently.
const reservedKey = "KEY+r3s/erv=ed:k@y!*'(x)~ sp$c&;,"

// Issue 22: a server at the key's host redirects to another host with the
// key in the path, in each common escape set. Through the client, nothing
// reaches the other host, and neither the error nor any event holds the
// key in any form (the watch checks every form and the events).
func TestHostileRedirectWithAnEncodedKeyInThePath(t *testing.T) {
	for name, form := range wiretest.Forms(reservedKey) {
		t.Run(name, func(t *testing.T) {
			w := wiretest.For(t)
			err := redirectKeyAway(t, w, form)
			text := fmt.Sprintf("%v %+v", err, err)
			for fname, f := range wiretest.Forms(reservedKey) {
				if strings.Contains(text, f) {
					t.Errorf("the key, %s, is in the error: %s", fname, text)
				}
			}
		})
	}
}

// redirectKeyAway has the client follow a redirect from the key's host to
// another host with form, the key in some encoding, in its path; it checks
// that the client refused it and the other host saw nothing, and returns
// the client's error.
func redirectKeyAway(t *testing.T, w *wiretest.Watch, form string) error {
	t.Helper()
	var reached atomic.Int64
	foreign := w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	api := w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Location", foreign.URL+"/landing/"+form+"/items")
		rw.WriteHeader(http.StatusFound)
	}))
	c := newClient(t, steady.Options{BaseURL: api.URL, Policy: fast(), Reporter: w.Reporter(nil),
		Keys: []credentials.Key{{Header: "X-Api-Key", Value: reservedKey, Hosts: []string{api.URL}}}})
	err := c.GetJSON(context.Background(), "/start", nil, new(any))
	if err == nil {
		t.Fatal("a redirect carrying the key to another host was followed")
	}
	w.Err("GetJSON", err)
	if n := reached.Load(); n != 0 {
		t.Errorf("the other host received %d requests", n)
	}
	return err
}

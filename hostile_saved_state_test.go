package steady_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
	"github.com/steadyhttp/steady/paginate"
)

// Issue 22: a server at the key's own host writes the key it received into
// the path of its next links, in each escape set of wiretest.Forms and as
// written. The walk may follow them (the host accepts the key); what a
// caller saves to resume it (the Summary, every page's URL and Next, in
// each form a URL is written: String, Path, EscapedPath, RawQuery,
// MarshalBinary) goes through the client's one redactor first, and then
// holds the key in no form the watch knows. The walk stops after page 1
// (a cap), so Summary.Next is the server's link itself.
func TestHostileKeyInThePathOfSavedNextLinks(t *testing.T) {
	for _, place := range keyPlaces {
		for name, form := range withRaw(wiretest.Forms(reservedKey)) {
			t.Run(place.name+"/"+name, func(t *testing.T) {
				w := wiretest.For(t)
				api := w.Server(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
					got := r.Header.Get("X-Api-Key") + r.URL.Query().Get("api_key")
					if got != reservedKey {
						http.Error(rw, "no key", http.StatusUnauthorized)
						return
					}
					rw.Header().Set("Link", "</v/"+keyIn(form)+"/items?page=2>; rel=\"next\"")
					io.WriteString(rw, `[{"id":1}]`)
				}))
				k := place.key
				k.Value, k.Hosts = reservedKey, []string{api.URL}
				c := newClient(t, steady.Options{BaseURL: api.URL, Policy: fast(), Reporter: w.Reporter(nil), Keys: []credentials.Key{k}})
				walk, err := c.Walk("/items", nil, paginate.Options{MaxPages: 1})
				if err != nil {
					t.Fatal(err)
				}
				red := credentials.NewRedactor(reservedKey)
				pages := 0
				for p, err := range walk.All(context.Background()) {
					if err != nil {
						w.Err("walk", err)
						break
					}
					pages++
					savedState(w, red, "page", p.URL, p.Next)
				}
				sum := walk.Summary()
				savedState(w, red, "Summary", sum.Next)
				w.Text("Summary %+v", red.String(fmt.Sprintf("%+v", sum)))
				if pages != 1 || sum.Complete || sum.Next == nil {
					t.Fatalf("%d pages, summary %+v; want page 1 and the link to page 2 to resume from", pages, sum)
				}
			})
		}
	}
}

// withRaw is forms with the key as written.
func withRaw(forms map[string]string) map[string]string {
	forms["as written"] = reservedKey
	return forms
}

// keyIn is form made a valid path segment: a form's '/' and ' ' stay
// the key's own once the server escapes what a segment cannot hold.
func keyIn(form string) string {
	return strings.NewReplacer(" ", "%20", "?", "%3F", "#", "%23").Replace(form)
}

// savedState hands the watch every form a caller would save a URL in.
func savedState(w *wiretest.Watch, red *credentials.Redactor, where string, us ...*url.URL) {
	for _, u := range us {
		if u == nil {
			continue
		}
		w.Text(where+" String()", red.String(u.String()))
		w.Text(where+" Path", red.String(u.Path))
		w.Text(where+" EscapedPath()", red.String(u.EscapedPath()))
		w.Text(where+" RawQuery", red.String(u.RawQuery))
		if b, err := u.MarshalBinary(); err == nil {
			w.Text(where+" MarshalBinary", red.String(string(b)))
		}
	}
}

package credentials_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/credentials"
)

// A key in a path, in each encoding a server might write it, is sealed
// out of the URL's text and put back by UnsealPath; the rest of the path
// and the query stay as the server wrote them.
func TestSealPathEveryEncoding(t *testing.T) {
	const key = "k3y/+=Secret:42"
	red := credentials.NewRedactor("other-secret-value", key)
	forms := []string{
		key,
		url.PathEscape(key),
		url.QueryEscape(key),
		strings.NewReplacer("%2F", "%2f", "%2B", "%2b", "%3D", "%3d", "%3A", "%3a").Replace(url.QueryEscape(key)),
		url.PathEscape(url.PathEscape(key)),
		"%6B%33%79%2F%2B%3D%53%65%63%72%65%74%3A%34%32", // every byte escaped
	}
	for _, f := range forms {
		raw := "https://api.example.gov/v1/keys/" + f + "/items?page=2&sig=abc"
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		sealed := red.SealPath(u)
		if red.Contains(sealed.String()) || strings.Contains(sealed.String(), "Secret") {
			t.Errorf("%s: sealed %s still holds the key", f, sealed)
		}
		if !strings.HasPrefix(sealed.String(), "https://api.example.gov/v1/keys/") || !strings.HasSuffix(sealed.String(), "/items?page=2&sig=abc") {
			t.Errorf("%s: sealed %s changed more than the key", f, sealed)
		}
		back, err := red.UnsealPath(sealed)
		if err != nil {
			t.Fatal(err)
		}
		if back.Path != "/v1/keys/"+key+"/items" || back.RawQuery != "page=2&sig=abc" {
			t.Errorf("%s: unsealed path %q query %q", f, back.Path, back.RawQuery)
		}
		// Through text and back, as a state file holds it.
		again, _ := url.Parse(sealed.String())
		if b2, err := red.UnsealPath(again); err != nil || b2.Path != back.Path {
			t.Errorf("%s: from text: %v, %v", f, b2, err)
		}
	}
	u, _ := url.Parse("https://api.example.gov/v1/items?page=2")
	if red.SealPath(u) != u {
		t.Error("a path without a key was copied")
	}
	sealed := red.SealPath(mustParse(t, "https://api.example.gov/"+key+"/x"))
	if _, err := credentials.NewRedactor("just-one-other").UnsealPath(sealed); err == nil {
		t.Error("a marker for a secret the redactor does not hold was accepted")
	} else if strings.Contains(err.Error(), "Secret") {
		t.Errorf("the error names the key: %v", err)
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func ExampleRedactor_SealPath() {
	red := credentials.NewRedactor("s3cr3t-key")
	next, _ := url.Parse("https://api.example.gov/v1/s3cr3t-key/items?page=2")
	sealed := red.SealPath(next)
	fmt.Println(sealed)
	back, _ := red.UnsealPath(sealed)
	fmt.Println(back.Path)
	// Output:
	// https://api.example.gov/v1/~steady-secret-0~/items?page=2
	// /v1/s3cr3t-key/items
}

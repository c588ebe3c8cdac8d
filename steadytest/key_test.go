package steadytest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

const secret = "s3cr3t/key+v@lue"

func TestKeyIsCheckedAndNeverLogged(t *testing.T) {
	cases := []struct {
		name       string
		require    bool
		header     string // value sent in X-Api-Key, "" for none
		query      string // raw query
		wantStatus int
		wantKey    bool
	}{
		{"header key", true, secret, "", 200, true},
		{"query key", true, "", "api_key=" + urlEscape(secret), 200, true},
		{"no key, required", true, "", "", 401, false},
		{"wrong key, required", true, "nope", "", 401, false},
		{"key echoed in another parameter", true, "", "q=" + urlEscape(secret), 401, false},
		{"no key, only counted", false, "", "", 200, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, steadytest.ServerOptions{
				KeyValue: secret, KeyHeader: "X-Api-Key", KeyQuery: "api_key", RequireKey: c.require,
			})
			req, _ := http.NewRequest(http.MethodGet, s.URL+steadytest.ItemsPath+"?"+c.query, nil)
			if c.header != "" {
				req.Header.Set("X-Api-Key", c.header)
			}
			resp, err := newClient(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, c.wantStatus)
			}
			r := s.Requests()[0]
			if r.KeyPresent != c.wantKey {
				t.Errorf("KeyPresent = %v, want %v", r.KeyPresent, c.wantKey)
			}
			if logged := fmt.Sprintf("%#v", r); strings.Contains(logged, "s3cr3t") {
				t.Errorf("the log shows the key: %s", logged)
			}
			if c.header != "" && r.Header.Get("X-Api-Key") != steadytest.Redacted {
				t.Errorf("key header logged as %q, want %q", r.Header.Get("X-Api-Key"), steadytest.Redacted)
			}
		})
	}
}

func TestNextLinksDoNotCarryTheKey(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{Rows: 20, KeyValue: secret, KeyQuery: "api_key"})
	resp, _ := get(t, newClient(t), s.URL+steadytest.ItemsPath+"?api_key="+urlEscape(secret)+"&limit=10")
	if next := nextFromLink(resp.Header); next == "" || strings.Contains(next, "api_key") {
		t.Errorf("next link %q: want one, without the key", next)
	}
}

func urlEscape(s string) string {
	return strings.NewReplacer("/", "%2F", "+", "%2B", "@", "%40").Replace(s)
}

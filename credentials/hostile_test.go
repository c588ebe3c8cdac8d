package credentials_test

import (
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/steadyhttp/steady/credentials"
)

// The transport's hostile cases (issue 10, items 1, 2 and 4): a key that
// reaches a request by another way than the transport attaching it (a
// server's echo, a header set by hand, a Referer) is taken out of every
// request to an origin that does not accept it, wherever it is.

func TestTransportStripsTheKeyByValueOnForeignHops(t *testing.T) {
	t.Parallel()
	b64 := base64.StdEncoding.EncodeToString([]byte("user:" + secret))
	tests := []struct {
		name      string
		url       string
		from      []string
		header    map[string]string
		wantQuery string
		gone      []string // headers that must not reach the foreign host
		kept      []string // headers that must
	}{
		{
			name: "Referer after an echoed redirect", url: "https://evil.example/landing",
			from:   []string{"https://api.example.gov/start", "https://api.example.gov/away?appid=" + secret},
			header: map[string]string{"Referer": "https://api.example.gov/away?appid=" + secret, "Accept": "text/plain"},
			gone:   []string{"Referer"}, kept: []string{"Accept"},
		},
		{
			name: "Referer without the key on a foreign hop", url: "https://evil.example/landing",
			from:   []string{"https://api.example.gov/start?q=private"},
			header: map[string]string{"Referer": "https://api.example.gov/start?q=private"},
			gone:   []string{"Referer"},
		},
		{
			name: "echoed under a name off the list", url: "https://evil.example/landing?a=1&hapikey=" + secret + "&subscription=" + url.QueryEscape(secret) + "&b=2",
			from:      []string{"https://api.example.gov/start"},
			wantQuery: "a=1&b=2",
		},
		{
			name: "escaped by another spelling", url: "https://evil.example/landing?a=%73" + secret[1:] + "&b=2",
			from:      []string{"https://api.example.gov/start"},
			wantQuery: "b=2",
		},
		{
			name: "any header holding it, as Basic too", url: "https://evil.example/landing",
			header: map[string]string{"X-Trace": "k=" + secret, "Authorization": "Basic " + b64, "Accept": "*/*"},
			gone:   []string{"X-Trace", "Authorization"}, kept: []string{"Accept"},
		},
		{
			name: "hand-set credential headers on a foreign hop", url: "https://evil.example/landing",
			from:   []string{"https://api.example.gov/start"},
			header: map[string]string{"X-Auth-Token": "t", "Api-Key": "k", "Cookie": "c=1", "Proxy-Authorization": "Basic x", "X-Request-Id": "r"},
			gone:   []string{"X-Auth-Token", "Api-Key", "Cookie", "Proxy-Authorization"}, kept: []string{"X-Request-Id"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := mustRequest(t, tt.url)
			if len(tt.from) > 0 {
				req = hop(t, tt.url, tt.from...)
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			var sent *http.Request
			resp, err := credentials.NewTransport(capture(&sent), headerKey).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := sent.URL.RawQuery; tt.wantQuery != "" && got != tt.wantQuery {
				t.Errorf("query = %q, want %q", got, tt.wantQuery)
			}
			for _, name := range tt.gone {
				if v, ok := sent.Header[name]; ok {
					t.Errorf("the foreign host received %s: %q", name, v)
				}
			}
			for _, name := range tt.kept {
				if sent.Header.Get(name) == "" {
					t.Errorf("%s was removed; it carries no key", name)
				}
			}
			for name, vv := range sent.Header {
				for _, v := range vv {
					if strings.Contains(v, secret) || strings.Contains(v, b64) {
						t.Errorf("header %s carries the key: %q", name, v)
					}
				}
			}
			if strings.Contains(sent.URL.String(), secret) || strings.Contains(resp.Request.URL.String(), secret) {
				t.Errorf("sent %s, resp.Request %s: the key is in a URL", sent.URL, resp.Request.URL)
			}
		})
	}
}

func TestTransportKeepsTheKeyWhereItIsAccepted(t *testing.T) {
	t.Parallel()
	// A header holding the key, set by hand, to the host that accepts it,
	// is the caller's business and goes as it is.
	req := mustRequest(t, "https://api.example.gov/x?echo="+secret)
	req.Header.Set("X-Trace", secret)
	var sent *http.Request
	resp, err := credentials.NewTransport(capture(&sent), headerKey).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if sent.Header.Get("X-Trace") != secret || sent.URL.RawQuery != "echo="+secret {
		t.Errorf("sent header %q and query %q; the accepting host must get them", sent.Header.Get("X-Trace"), sent.URL.RawQuery)
	}
	// resp.Request.URL still never shows it.
	if strings.Contains(resp.Request.URL.String(), secret) {
		t.Errorf("resp.Request.URL = %s", resp.Request.URL)
	}
}

func TestTransportRefusesAKeyInAForeignPath(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"https://evil.example/v1/" + secret + "/items",
		"https://evil.example/v1/" + url.PathEscape("a b"+secret),
	} {
		var sent *http.Request
		_, err := credentials.NewTransport(capture(&sent), headerKey).RoundTrip(mustRequest(t, u))
		var le *credentials.LeakError
		if !errors.As(err, &le) || sent != nil {
			t.Fatalf("%s: err %v, sent %v; want a *LeakError and nothing sent", u, err, sent)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the refusal quotes the key: %v", err)
		}
	}
}

func TestTransportGuardsABodyToAForeignOrigin(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("x", 5000) + secret + "tail"
	for _, name := range []string{"whole", "one byte at a time"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var rd io.Reader = strings.NewReader(body)
			if name != "whole" {
				rd = iotest.OneByteReader(rd)
			}
			req, _ := http.NewRequest(http.MethodPost, "https://evil.example/upload", rd)
			var got, rewound []byte
			var readErr, rewindErr error
			next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				got, readErr = io.ReadAll(r.Body)
				// As net/http does to re-send on a new connection.
				if r.GetBody == nil {
					rewindErr = &credentials.LeakError{} // nothing to rewind
				} else if b, err := r.GetBody(); err == nil {
					rewound, rewindErr = io.ReadAll(b)
				}
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
			})
			if _, err := credentials.NewTransport(next, headerKey).RoundTrip(req); err != nil {
				t.Fatal(err)
			}
			var le *credentials.LeakError
			if !errors.As(readErr, &le) || !errors.As(rewindErr, &le) {
				t.Fatalf("reading the body: %v, and again through GetBody: %v; want a *LeakError", readErr, rewindErr)
			}
			if strings.Contains(string(rewound), secret[:3]) {
				t.Errorf("the rewound body hands out the start of the key")
			}
			if strings.Contains(string(got), secret[:3]) {
				t.Errorf("%d bytes handed out include the start of the key", len(got))
			}
			if len(got) < 4000 {
				t.Errorf("only %d bytes handed out before the key; the guard holds back too much", len(got))
			}
		})
	}
	// A clean body passes whole, and one to the accepting host is not
	// looked at.
	for _, u := range []string{"https://evil.example/upload", "https://api.example.gov/upload"} {
		clean := strings.Repeat("clean ", 3000)
		if u == "https://api.example.gov/upload" {
			clean += secret
		}
		req, _ := http.NewRequest(http.MethodPost, u, iotest.HalfReader(strings.NewReader(clean)))
		var got []byte
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			got, _ = io.ReadAll(r.Body)
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
		})
		if _, err := credentials.NewTransport(next, headerKey).RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if string(got) != clean {
			t.Errorf("%s: %d bytes arrived of %d", u, len(got), len(clean))
		}
	}
}

func TestTransportResponseRequestWhateverIsBelow(t *testing.T) {
	t.Parallel()
	// A layer below that clones the request (as a User-Agent setter does)
	// must not let the attached key show in resp.Request.
	cloning := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		c := r.Clone(r.Context())
		c.Header.Set("User-Agent", "x")
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: c}, nil
	})
	req := mustRequest(t, "https://api.example.gov/x?a=1")
	resp, err := credentials.NewTransport(cloning, queryKey).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Request != req {
		t.Errorf("resp.Request = %v, want the caller's request", resp.Request.URL)
	}
}

func TestTransportScopesHandSetCredentialsByValue(t *testing.T) {
	t.Parallel()
	// No key configured: the credentials set by hand on the first request
	// belong to its origin, and a server that echoes them into a foreign
	// Location does not pass them on.
	const token = "hand-5et-t0ken-9"
	basic := base64.StdEncoding.EncodeToString([]byte("me:" + token))
	for name, value := range map[string]string{
		"X-Api-Key":     token,
		"Authorization": "Basic " + basic,
		"X-Auth-Token":  token,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			first := mustRequest(t, "https://api.example.gov/start")
			first.Header.Set(name, value)
			req := mustRequest(t, "https://evil.example/landing?a=1&hapikey="+token+"&b="+basic)
			req.Header = first.Header.Clone()
			req.Header.Set("Referer", "https://api.example.gov/start?x="+token)
			req.Response = &http.Response{Request: first}
			var sent *http.Request
			if _, err := credentials.NewTransport(capture(&sent)).RoundTrip(req); err != nil {
				t.Fatal(err)
			}
			if sent.URL.RawQuery != "a=1" {
				t.Errorf("query %q, want %q", sent.URL.RawQuery, "a=1")
			}
			for h, vv := range sent.Header {
				t.Errorf("the foreign host received %s: %q", h, vv)
			}
		})
	}
}

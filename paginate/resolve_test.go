package paginate_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestResolveNext(t *testing.T) {
	t.Parallel()
	const from = "https://api.example.gov/v1/items?page=1"
	cases := []struct {
		name    string
		href    string
		from    string
		allowed []string
		want    string // the URL, when it is followed
		err     error  // the cause, when it is refused
	}{
		{name: "relative query", href: "?page=2", want: "https://api.example.gov/v1/items?page=2"},
		{name: "relative path", href: "items?page=2", want: "https://api.example.gov/v1/items?page=2"},
		{name: "dot segments", href: "../v2/items?page=2", want: "https://api.example.gov/v2/items?page=2"},
		{name: "absolute path", href: "/v1/items?page=2", want: "https://api.example.gov/v1/items?page=2"},
		{name: "absolute", href: "https://api.example.gov/v1/items?page=2", want: "https://api.example.gov/v1/items?page=2"},
		{name: "host in other case", href: "https://API.Example.GOV/x", want: "https://API.Example.GOV/x"},
		{name: "default port spelled out", href: "https://api.example.gov:443/x", want: "https://api.example.gov:443/x"},
		{name: "surrounding whitespace", href: "  ?page=2\n", want: "https://api.example.gov/v1/items?page=2"},
		{name: "fragment dropped", href: "?page=2#top", want: "https://api.example.gov/v1/items?page=2"},
		{name: "upgrade to https", href: "https://api.example.gov/x", from: "http://api.example.gov/", want: "https://api.example.gov/x"},
		{name: "plain http kept", href: "/x", from: "http://api.example.gov/", want: "http://api.example.gov/x"},
		{name: "second allowed host", href: "https://cdn.example.gov/x", allowed: []string{"api.example.gov", "cdn.example.gov"}, want: "https://cdn.example.gov/x"},
		{name: "allowed entry as URL", href: "https://cdn.example.gov/x", allowed: []string{"https://cdn.example.gov"}, want: "https://cdn.example.gov/x"},
		{name: "allowed port", href: "https://api.example.gov:8443/x", allowed: []string{"api.example.gov:8443"}, want: "https://api.example.gov:8443/x"},
		{name: "ipv6 loopback", href: "/x", from: "http://[::1]:8080/", want: "http://[::1]:8080/x"},
		{name: "userinfo stripped", href: "https://user:secret@api.example.gov/x", want: "https://api.example.gov/x"},
		{name: "page userinfo not inherited", href: "/x", from: "https://user:secret@api.example.gov/", want: "https://api.example.gov/x"},

		{name: "foreign host", href: "https://evil.example/x", err: paginate.ErrCrossHost},
		{name: "lookalike suffix", href: "https://api.example.gov.evil.com/x", err: paginate.ErrCrossHost},
		{name: "lookalike prefix", href: "https://evilapi.example.gov/x", err: paginate.ErrCrossHost},
		{name: "subdomain", href: "https://a.api.example.gov/x", err: paginate.ErrCrossHost},
		{name: "userinfo hiding the host", href: "https://api.example.gov@evil.example/x", err: paginate.ErrCrossHost},
		{name: "protocol-relative", href: "//evil.example/x", err: paginate.ErrCrossHost},
		{name: "port mismatch", href: "https://api.example.gov:8443/x", err: paginate.ErrCrossHost},
		{name: "allowed port but default used", href: "https://api.example.gov/x", from: "https://api.example.gov:8443/", err: paginate.ErrCrossHost},
		{name: "trailing dot", href: "https://api.example.gov./x", err: paginate.ErrCrossHost},
		{name: "downgrade", href: "http://api.example.gov/x", err: paginate.ErrDowngrade},
		{name: "downgrade with port 443", href: "http://api.example.gov:443/x", err: paginate.ErrCrossHost},
		{name: "javascript", href: "javascript:alert(1)", err: paginate.ErrScheme},
		{name: "javascript mixed case", href: "JavaScript:alert(1)", err: paginate.ErrScheme},
		{name: "ftp", href: "ftp://api.example.gov/x", err: paginate.ErrScheme},
		{name: "file", href: "file:///etc/passwd", err: paginate.ErrScheme},
		{name: "data", href: "data:text/plain,hi", err: paginate.ErrScheme},
		{name: "opaque http", href: "http:evil.example", err: paginate.ErrBadLink},
		{name: "no host", href: "https:///x", err: paginate.ErrBadLink},
		{name: "empty", href: "", err: paginate.ErrBadLink},
		{name: "blank", href: " \t", err: paginate.ErrBadLink},
		{name: "unparsable", href: "https://api.example.gov/%zz", err: paginate.ErrBadLink},
		{name: "control character", href: "/x\x7f", err: paginate.ErrBadLink},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := c.from
			if f == "" {
				f = from
			}
			got, err := paginate.Policy{AllowedHosts: c.allowed}.Resolve(c.href, mustURL(t, f))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("ResolveNext(%q) = %v, %v; want error %v", c.href, got, err, c.err)
				}
				var pe *paginate.Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %T is not a *paginate.Error", err)
				}
				if got != nil {
					t.Errorf("a refused link still returned %v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ResolveNext(%q) failed: %v", c.href, err)
			}
			if got.String() != c.want {
				t.Errorf("ResolveNext(%q) = %q, want %q", c.href, got, c.want)
			}
			if got.User != nil {
				t.Errorf("userinfo kept: %v", got.User)
			}
		})
	}
}

func TestResolveNextDoesNotModifyFrom(t *testing.T) {
	t.Parallel()
	from := mustURL(t, "https://u:p@api.example.gov/x?page=1#f")
	before := from.String()
	if _, err := (paginate.Policy{}).Resolve("?page=2", from); err != nil {
		t.Fatal(err)
	}
	if from.String() != before {
		t.Errorf("from changed to %q, was %q", from, before)
	}
}

func TestCanonicalHost(t *testing.T) {
	t.Parallel()
	p := paginate.Policy{CanonicalHost: "api.example.gov"}
	cases := []struct {
		name, from, href, want string
		err                    error
	}{
		{name: "internal host and port", from: "https://api.example.gov/items", href: "http://backend-7:8080/items?page=2", want: "https://api.example.gov/items?page=2"},
		{name: "userinfo dropped", from: "https://api.example.gov/items", href: "http://svc:pw@backend:8080/items?page=2", want: "https://api.example.gov/items?page=2"},
		{name: "relative", from: "https://api.example.gov/items", href: "?page=2", want: "https://api.example.gov/items?page=2"},
		{name: "page on plain http", from: "http://api.example.gov/items", href: "?page=2", want: "https://api.example.gov/items?page=2"},
		{name: "scheme still checked", from: "https://api.example.gov/items", href: "javascript:alert(1)", err: paginate.ErrScheme},
		{name: "host case", from: "https://api.example.gov/items", href: "https://API.EXAMPLE.GOV:9/items", want: "https://api.example.gov/items"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := p.Resolve(c.href, mustURL(t, c.from))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("Resolve(%q) = %v, %v; want %v", c.href, got, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != c.want {
				t.Errorf("Resolve(%q) = %q, want %q", c.href, got, c.want)
			}
		})
	}
}

func TestRefusalNamesBothHostsAndRedacts(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value"
	from := mustURL(t, "https://api.example.gov/items?api_key="+secret)
	_, err := paginate.Policy{}.Resolve("https://user:"+secret+"@evil.example/steal?token="+secret, from)
	if !errors.Is(err, paginate.ErrCrossHost) {
		t.Fatalf("got %v, want ErrCrossHost", err)
	}
	msg := err.Error()
	for _, want := range []string{"refusing to follow a cross-host next-page link", "points at evil.example rather than api.example.gov"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, secret) {
		t.Errorf("message leaks the secret: %q", msg)
	}
	var pe *paginate.Error
	if !errors.As(err, &pe) || pe.Host != "evil.example" || len(pe.Allowed) != 1 || pe.Allowed[0] != "api.example.gov" {
		t.Errorf("evidence = %+v, want Host evil.example and Allowed [api.example.gov]", pe)
	}
}

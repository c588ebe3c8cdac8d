package paginate_test

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

func FuzzResolveNext(f *testing.F) {
	for _, s := range [][3]string{
		{"?page=2", "https://api.example.gov/v1/items", ""},
		{"//evil.example/x", "https://api.example.gov/", ""},
		{"https://user:pw@api.example.gov/x#f", "https://api.example.gov/", ""},
		{"http://api.example.gov/x", "https://api.example.gov/", ""},
		{"javascript:alert(1)", "https://api.example.gov/", ""},
		{"https://api.example.gov:8443/x", "https://api.example.gov/", "api.example.gov:8443"},
		{"https://api.example.gov.evil.com/", "https://api.example.gov/", "api.example.gov"},
		{"http://[::1]:80/x", "http://[::1]/", "[::1]"},
		{"HTTPS://API.EXAMPLE.GOV/%2e%2e/x", "https://api.example.gov/a/b", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, href, from, allowed string) {
		base, err := url.Parse(from)
		if err != nil {
			return
		}
		var hosts []string
		if allowed != "" {
			hosts = strings.Split(allowed, ",")
		}
		u, err := paginate.Policy{AllowedHosts: hosts}.Resolve(href, base)
		if err != nil {
			var e *paginate.Error
			if u != nil || !errors.As(err, &e) {
				t.Fatalf("refusal %v (%T) returned URL %v", err, err, u)
			}
			for _, cause := range []error{paginate.ErrBadLink, paginate.ErrScheme, paginate.ErrCrossHost, paginate.ErrDowngrade} {
				if errors.Is(err, cause) {
					return
				}
			}
			t.Fatalf("refusal without a known cause: %v", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("followed scheme %q", u.Scheme)
		}
		if base.Scheme == "https" && u.Scheme == "http" {
			t.Fatalf("downgrade %v -> %v", base, u)
		}
		if u.User != nil || u.Fragment != "" || u.Host == "" || u.Opaque != "" {
			t.Fatalf("unsafe URL %#v", u)
		}
		if len(hosts) == 0 {
			hosts = []string{base.Host}
		}
		// The policy must agree with a second, independent reading of the
		// host: the re-parsed URL names an allowed host.
		again, err := url.Parse(u.String())
		if err != nil {
			t.Fatalf("resolved URL %q does not parse: %v", u, err)
		}
		if again.User != nil {
			t.Fatalf("re-parsed %q carries userinfo", u)
		}
		if !strings.EqualFold(again.Hostname(), u.Hostname()) {
			t.Fatalf("host changed on re-parse: %q vs %q", again.Hostname(), u.Hostname())
		}
		if u2, err := (paginate.Policy{AllowedHosts: hosts}).Resolve(u.String(), base); err != nil || u2.String() != u.String() {
			t.Fatalf("resolving %q again gave %v, %v", u, u2, err)
		}
	})
}

func FuzzParseLinkHeader(f *testing.F) {
	for _, s := range []string{
		`<https://api.example.gov/x?page=2>; rel="next"`,
		`</p1>; rel="first", </p3>; rel="next last"; title="a, b", </p9>; rel=last`,
		`</p3>; rel=prev; rel=next; anchor="#x"; title*=UTF-8'de'n%c3%a4chste`,
		`junk "a,b", <x,y>;;rel = "n\"ext"`,
		`<`,
		`</a>; rel="`,
		``,
		`<?page=2; rel="next"`,
		`</a>; rel=alternate, <?page=2; rel=next, </p9>; rel=next`,
		`</p1>; title="page 1, </p3>; rel=next`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		links := paginate.ParseLinkHeader([]string{v})
		if len(links) > len(v) {
			t.Fatalf("%d links from %d bytes", len(links), len(v))
		}
		for _, l := range links {
			if strings.ContainsRune(l.Target, '>') {
				t.Fatalf("target %q holds '>'", l.Target)
			}
			for _, p := range l.Params {
				if p.Name == "" || p.Name != strings.ToLower(p.Name) {
					t.Fatalf("parameter name %q", p.Name)
				}
			}
			if rel, _ := l.Param("rel"); rel != l.Rel {
				t.Fatalf("Rel %q but first rel parameter %q", l.Rel, rel)
			}
			again := paginate.ParseLinkHeader([]string{l.String()})
			if len(again) != 1 || !reflect.DeepEqual(again[0], l) {
				t.Fatalf("%q does not parse back:\n%#v\n%#v", l.String(), l, again)
			}
		}
		// The strategy follows the first readable next link, or fails
		// with ErrBadLink, or finds none; it never ends with a next link
		// in sight.
		var want string
		for _, l := range links {
			if _, anchored := l.Param("anchor"); l.HasRel("next") && !anchored && !strings.Contains(l.Target, "<") {
				want = l.Target
				break
			}
		}
		got, err := paginate.LinkHeader.NextLink(&paginate.Page{Header: map[string][]string{"Link": {v}}})
		switch {
		case err != nil && !errors.Is(err, paginate.ErrBadLink):
			t.Fatalf("NextLink error %v is not ErrBadLink", err)
		case err != nil && strings.TrimSpace(want) != "":
			t.Fatalf("NextLink failed (%v) with next link %q in the header", err, want)
		case err == nil && got != want:
			t.Fatalf("NextLink = %q, want %q", got, want)
		}
	})
}

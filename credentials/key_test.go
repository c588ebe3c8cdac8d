package credentials_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/credentials"
)

const secret = "s3cret-VALUE-42"

func TestKeyValidate(t *testing.T) {
	t.Parallel()
	hosts := []string{"api.example.gov"}
	tests := []struct {
		name      string
		key       credentials.Key
		wantField string // "" means valid
	}{
		{"header key", credentials.Key{Header: "X-Api-Key", Value: secret, Hosts: hosts}, ""},
		{"query key", credentials.Key{Query: "api_key", Value: secret, Hosts: hosts}, ""},
		{"authorization header", credentials.Key{Header: "authorization", Value: "Bearer " + secret, Hosts: hosts}, ""},
		{"query value with spaces and newline", credentials.Key{Query: "api_key", Value: "a b\nc", Hosts: hosts}, ""},
		{"neither header nor query", credentials.Key{Value: secret, Hosts: hosts}, "Header"},
		{"both header and query", credentials.Key{Header: "X-Api-Key", Query: "api_key", Value: secret, Hosts: hosts}, "Query"},
		{"header name with space", credentials.Key{Header: "X Api Key", Value: secret, Hosts: hosts}, "Header"},
		{"header name with colon", credentials.Key{Header: "X-Api-Key:", Value: secret, Hosts: hosts}, "Header"},
		{"reserved header", credentials.Key{Header: "host", Value: secret, Hosts: hosts}, "Header"},
		{"query name with control character", credentials.Key{Query: "api\x00key", Value: secret, Hosts: hosts}, "Query"},
		{"empty value", credentials.Key{Header: "X-Api-Key", Hosts: hosts}, "Value"},
		{"header value with newline", credentials.Key{Header: "X-Api-Key", Value: secret + "\r\nX-Evil: 1", Hosts: hosts}, "Value"},
		{"header value with trailing space", credentials.Key{Header: "X-Api-Key", Value: secret + " ", Hosts: hosts}, "Value"},
		{"no hosts", credentials.Key{Header: "X-Api-Key", Value: secret}, "Hosts"},
		{"second host bad", credentials.Key{Header: "X-Api-Key", Value: secret, Hosts: []string{"api.example.gov", "http://api.example.gov"}}, "Hosts[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.key.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ke *credentials.KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("Validate() = %v, want a *KeyError", err)
			}
			if got, want := ke.Field, tt.wantField; got != want {
				t.Errorf("Field = %q, want %q (%v)", got, want, err)
			}
			if !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("message %q does not name the field %q", err, tt.wantField)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("message %q quotes the secret", err)
			}
		})
	}
}

func TestKeyValidateHosts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		entry string
		ok    bool
	}{
		{"api.example.gov", true},
		{"API.Example.GOV", true},
		{"api.example.gov:8443", true},
		{"https://api.example.gov", true},
		{"HTTPS://api.example.gov:443", true},
		{"under_score.example.gov", true},
		{"127.0.0.5", true},
		{"::1", true},
		{"[2001:db8::1]:443", true},
		{"[2001:db8::1]", true},
		{"http://127.0.0.1:8080", true},
		{"http://127.9.9.9", true},
		{"http://localhost:1", true},
		{"HTTP://LOCALHOST:1", true},
		{"http://[::1]:9", true},
		{"http://[::ffff:127.0.0.1]:9", true},

		{"", false},
		{"https://", false},
		{"http://api.example.gov", false},
		{"http://10.0.0.1:8080", false},
		{"http://localhost.example.gov", false},
		{"http://127.1", false},
		{"ftp://api.example.gov", false},
		{"https://api.example.gov/", false},
		{"https://api.example.gov/v1", false},
		{"api.example.gov?x=1", false},
		{"user@api.example.gov", false},
		{"*.example.gov", false},
		{".example.gov", false},
		{"api..example.gov", false},
		{"api.example.gov.", false},
		{"api example.gov", false},
		{"bücher.example", false},
		{"api.example.gov:", false},
		{"api.example.gov:0", false},
		{"api.example.gov:080", false},
		{"api.example.gov:+80", false},
		{"api.example.gov:65536", false},
		{"api.example.gov:https", false},
		{":443", false},
		{"[::1", false},
		{"[::1]x", false},
		{"[127.0.0.1]:80", false},
		{"[::1]:", false},
		{"fe80::1%eth0", false},
		{"[fe80::1%25eth0]:443", false},
		{"a:b:c", false},
		{"::", false},
		{"0.0.0.0:443", false},
		{"http://0.0.0.0:8080", false},
		{"[ff02::1]", false},
		{strings.Repeat("a", 64) + ".example.gov", false},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			t.Parallel()
			k := credentials.Key{Header: "X-Api-Key", Value: secret, Hosts: []string{tt.entry}}
			err := k.Validate()
			if got := err == nil; got != tt.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "Hosts[0]") {
				t.Errorf("message %q does not name Hosts[0]", err)
			}
		})
	}
}

func TestKeyAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		hosts []string
		url   string
		want  bool
	}{
		{"allowed host", []string{"api.example.gov"}, "https://api.example.gov/x", true},
		{"host case ignored", []string{"api.example.gov"}, "https://API.Example.GOV/x", true},
		{"entry case ignored", []string{"API.EXAMPLE.GOV"}, "https://api.example.gov/x", true},
		{"explicit default port", []string{"api.example.gov"}, "https://api.example.gov:443/x", true},
		{"userinfo does not change the host", []string{"api.example.gov"}, "https://u:p@api.example.gov/x", true},
		{"https prefix in entry", []string{"https://api.example.gov"}, "https://api.example.gov/x", true},
		{"second entry", []string{"a.example.gov", "api.example.gov"}, "https://api.example.gov/x", true},
		{"downgrade to http", []string{"api.example.gov"}, "http://api.example.gov/x", false},
		{"lookalike suffix", []string{"api.example.gov"}, "https://api.example.gov.evil.com/x", false},
		{"other host same domain", []string{"api.example.gov"}, "https://other.example.gov/x", false},
		{"foreign host", []string{"api.example.gov"}, "https://evil.example/x", false},
		{"subdomain", []string{"api.example.gov"}, "https://sub.api.example.gov/x", false},
		{"parent domain", []string{"api.example.gov"}, "https://example.gov/x", false},
		{"trailing dot", []string{"api.example.gov"}, "https://api.example.gov./x", false},
		{"userinfo lookalike", []string{"api.example.gov"}, "https://api.example.gov@evil.example/x", false},
		{"other port", []string{"api.example.gov"}, "https://api.example.gov:8443/x", false},
		{"entry port matches", []string{"api.example.gov:8443"}, "https://api.example.gov:8443/x", true},
		{"entry port needs port", []string{"api.example.gov:8443"}, "https://api.example.gov/x", false},
		{"other scheme", []string{"api.example.gov"}, "ftp://api.example.gov/x", false},
		{"no scheme", []string{"api.example.gov"}, "//api.example.gov/x", false},
		{"relative", []string{"api.example.gov"}, "/x", false},
		{"loopback over http opted in", []string{"http://127.0.0.1:8080"}, "http://127.0.0.1:8080/x", true},
		{"loopback http entry is http only", []string{"http://127.0.0.1:8080"}, "https://127.0.0.1:8080/x", false},
		{"loopback other port", []string{"http://127.0.0.1:8080"}, "http://127.0.0.1:8081/x", false},
		{"loopback by another name", []string{"http://127.0.0.1:8080"}, "http://localhost:8080/x", false},
		{"loopback without opt-in", []string{"127.0.0.1:8080"}, "http://127.0.0.1:8080/x", false},
		{"loopback http default port", []string{"http://localhost"}, "http://localhost/x", true},
		{"ipv6 spelled two ways", []string{"http://[::1]:9"}, "http://[0:0:0:0:0:0:0:1]:9/x", true},
		{"ipv6 https", []string{"[2001:db8::1]"}, "https://[2001:DB8::1]/x", true},
		{"ipv6 zone", []string{"[fe80::1]"}, "https://[fe80::1%25eth0]/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := credentials.Key{Header: "X-Api-Key", Value: secret, Hosts: tt.hosts}
			if err := k.Validate(); err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := k.Accepts(u); got != tt.want {
				t.Errorf("Accepts(%s) = %v, want %v", tt.url, got, tt.want)
			}
		})
	}
}

func TestKeyAcceptsNothingWhenInvalid(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse("https://api.example.gov/x")
	k := credentials.Key{Header: "X Api Key", Value: secret, Hosts: []string{"api.example.gov"}}
	if k.Accepts(u) {
		t.Error("an invalid key accepted a destination")
	}
	if (credentials.Key{}).Accepts(nil) {
		t.Error("the zero key accepted a nil URL")
	}
}

func TestKeyPrintsWithoutItsValue(t *testing.T) {
	t.Parallel()
	k := credentials.Key{Header: "X-Api-Key", Value: secret, Hosts: []string{"api.example.gov"}}
	holder := struct {
		Keys []credentials.Key
		Key  *credentials.Key
	}{[]credentials.Key{k}, &k}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X"} {
		for _, arg := range []any{k, &k, holder} {
			if got := fmt.Sprintf(verb, arg); strings.Contains(got, secret) || strings.Contains(got, fmt.Sprintf("%x", secret)) {
				t.Errorf("Sprintf(%s, %T) = %s shows the value", verb, arg, got)
			}
		}
	}
	if got, want := k.String(), `credentials.Key{Header: "X-Api-Key", Value: REDACTED, Hosts: ["api.example.gov"]}`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("configured", "key", k)
	if strings.Contains(buf.String(), secret) || !strings.Contains(buf.String(), "X-Api-Key") {
		t.Errorf("slog JSON output %s", buf.String())
	}
}

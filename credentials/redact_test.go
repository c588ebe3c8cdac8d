package credentials_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/credentials"
)

func TestIsCredentialName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		// The names the issue lists, in the spellings people use.
		{"api_key", true}, {"apikey", true}, {"api-key", true}, {"API_KEY", true},
		{"ApiKey", true}, {"api.key", true}, {"api key", true}, {"key", true},
		{"KEY", true}, {"token", true}, {"Token", true}, {"access_token", true},
		{"accessToken", true}, {"auth", true}, {"authorization", true},
		{"Authorization", true}, {"password", true}, {"passwd", true},
		{"secret", true}, {"client_secret", true}, {"clientSecret", true},
		{"signature", true}, {"sig", true}, {"x-api-key", true}, {"X-Api-Key", true},
		// Their kin.
		{"private_token", true}, {"X-Amz-Signature", true}, {"X-Amz-Security-Token", true},
		{"subscription-key", true}, {"Ocp-Apim-Subscription-Key", true},
		{"refresh_token", true}, {"x-goog-api-key", true}, {"pwd", true},
		// Pagination state and ordinary words are not credentials.
		{"page_token", false}, {"pageToken", false}, {"next_token", false},
		{"monkey", false}, {"keyword", false}, {"keys", false}, {"limit", false},
		{"cursor", false}, {"author", false}, {"token_type", false}, {"hotkey", false},
		{"signed", false}, {"q", false}, {"", false}, {"-_. ", false},
		{strings.Repeat("x", 100) + "key", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := credentials.IsCredentialName(tt.name); got != tt.want {
				t.Errorf("IsCredentialName(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"nothing to hide", "https://api.example.gov/x?page=2&limit=10", "https://api.example.gov/x?page=2&limit=10"},
		{"user and password", "https://user:pw@api.example.gov/x", "https://REDACTED@api.example.gov/x"},
		{"token as user", "https://ghp_abc@api.example.gov/x", "https://REDACTED@api.example.gov/x"},
		{"credential parameter, order kept", "https://h/x?b=2&api_key=abc&a=1", "https://h/x?b=2&api_key=REDACTED&a=1"},
		{"every occurrence", "https://h/x?sig=1&q=x&SIG=2", "https://h/x?sig=REDACTED&q=x&SIG=REDACTED"},
		{"encoding of the rest kept", "https://h/x?q=a+b&token=x%20y&z=%2F", "https://h/x?q=a+b&token=REDACTED&z=%2F"},
		{"escaped name", "https://h/x?api%5Fkey=abc&access%2Dtoken=d", "https://h/x?api%5Fkey=REDACTED&access%2Dtoken=REDACTED"},
		{"plus in name", "https://h/x?api+key=abc", "https://h/x?api+key=REDACTED"},
		{"semicolon separator", "https://h/x?a=1;token=abc", "https://h/x?a=1;token=REDACTED"},
		{"empty value", "https://h/x?token=&a=1", "https://h/x?token=REDACTED&a=1"},
		{"bare name has no value to hide", "https://h/x?token&a=1", "https://h/x?token&a=1"},
		{"value with equals", "https://h/x?key=a=b&c=d", "https://h/x?key=REDACTED&c=d"},
		{"malformed escape in a value", "https://h/x?q=%zz&token=abc", "https://h/x?q=%zz&token=REDACTED"},
		{"malformed escape in a name", "https://h/x?to%zzken=abc&a=1", "https://h/x?to%zzken=REDACTED&a=1"},
		{"truncated escape", "https://h/x?a=1&b%=2", "https://h/x?a=1&b%=REDACTED"},
		{"cursor kept", "https://h/x?page_token=abc&cursor=d", "https://h/x?page_token=abc&cursor=d"},
		{"token in fragment", "https://app.example/cb#access_token=abc&state=xyz", "https://app.example/cb#access_token=REDACTED&state=xyz"},
		{"escaped fragment", "https://app.example/cb#state=a%20b&id_token=x%2Fy", "https://app.example/cb#state=a%20b&id_token=REDACTED"},
		{"plain fragment", "https://h/doc#section-2", "https://h/doc#section-2"},
		{"empty query kept", "https://h/x?", "https://h/x?"},
		{"opaque with userinfo", "http:user:pw@api.example.gov", "http:REDACTED@api.example.gov"},
		{"all at once", "https://u:p@h:8443/a%2Fb?x=1&password=p#secret=s", "https://REDACTED@h:8443/a%2Fb?x=1&password=REDACTED#secret=REDACTED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := url.Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := credentials.RedactURL(u); got != tt.want {
				t.Errorf("RedactURL(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if got := credentials.RedactURLString(tt.in); got != tt.want {
				t.Errorf("RedactURLString(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if got := u.String(); got != tt.in && !strings.Contains(tt.in, "%zz") && !strings.Contains(tt.in, "%=") {
				t.Errorf("RedactURL changed its argument: %s", got)
			}
		})
	}
	if got := credentials.RedactURL(nil); got != "" {
		t.Errorf("RedactURL(nil) = %q, want empty", got)
	}
}

func TestRedactURLDoesNotModifyArgument(t *testing.T) {
	t.Parallel()
	u, _ := url.Parse("https://u:p@h/x?token=abc#access_token=def")
	before := *u
	credentials.RedactURL(u)
	if *u != before {
		t.Errorf("argument changed: %+v, was %+v", *u, before)
	}
	if p, _ := u.User.Password(); p != "p" {
		t.Errorf("argument's password changed to %q", p)
	}
}

func TestRedactURLStringUnparsable(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"https://exa mple.com/?token=abc",
		"http://[::1/?token=abc",
		"https://h/x#token=%zz",
		"https://h/\x7f?token=abc",
		":no-scheme?token=abc",
	} {
		got := credentials.RedactURLString(in)
		if got != "(unparsable URL)" {
			t.Errorf("RedactURLString(%q) = %q, want the placeholder", in, got)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		secrets []string
		want    string
	}{
		{"one secret twice", "key abc rejected; abc expired", []string{"abc"}, "key REDACTED rejected; REDACTED expired"},
		{"several secrets", "a=1 b=2", []string{"1", "2"}, "a=REDACTED b=REDACTED"},
		{"empty secret ignored", "text", []string{""}, "text"},
		{"no secrets", "text", nil, "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := credentials.Redact(tt.in, tt.secrets...); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

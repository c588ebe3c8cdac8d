package credentials

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestRedactorString(t *testing.T) {
	t.Parallel()
	const key = "s3cr3t/k+y=v&1"
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	r := NewRedactor("", key)
	cases := []struct{ name, in, want string }{
		{"no secret", "nothing to see", "nothing to see"},
		{"as written", "you sent " + key + ".", "you sent REDACTED."},
		{"twice", key + key, "REDACTEDREDACTED"},
		{"query-escaped", "q=" + url.QueryEscape(key) + "&x=1", "q=REDACTED&x=1"},
		{"path-escaped", "/a/" + url.PathEscape(key) + "/b", "/a/REDACTED/b"},
		{"Basic, key as password", "Authorization: Basic " + b64("user:"+key) + "\n", "Authorization: Basic REDACTED\n"},
		{"Basic, key as user", "authorization=Basic " + b64(key+":") + " ok", "authorization=Basic REDACTED ok"},
		{"bearer of the base64", "Bearer " + b64(key), "Bearer REDACTED"},
		{"URL alphabet, unpadded", "t=" + base64.RawURLEncoding.EncodeToString([]byte("ab"+key)), "t=REDACTED"},
		{"base64 of something else", "Basic " + b64("user:password"), "Basic " + b64("user:password")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := r.String(c.in); got != c.want {
				t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
	var none *Redactor
	if NewRedactor("") != nil || none.String(key) != key {
		t.Error("no secrets must change no text")
	}
}

func TestRedactorError(t *testing.T) {
	t.Parallel()
	const key = "s3cr3t-k3y"
	cause := errors.New("echoed " + key)
	r := NewRedactor(key)
	err := r.Error(&url.Error{Op: "Get", URL: "https://user:pw@api.example.gov/x?api_key=a&q=" + key, Err: cause})
	var ue *url.Error
	if !errors.As(err, &ue) || !errors.Is(err, cause) {
		t.Fatalf("cause %v lost its *url.Error or its cause", err)
	}
	if want := `Get "https://REDACTED@api.example.gov/x?api_key=REDACTED&q=REDACTED": echoed REDACTED`; err.Error() != want {
		t.Errorf("cause text %q, want %q", err, want)
	}
	if plain := errors.New("nothing secret"); r.Error(plain) != plain {
		t.Error("a cause without a secret must be returned as it was")
	}
	if got := r.Error(&url.Error{Op: "Get", URL: "%zz", Err: cause}).(*url.Error).URL; got != "(unparsable URL)" {
		t.Errorf("unparsable URL kept as %q", got)
	}
}

func FuzzRedactBase64(f *testing.F) {
	f.Add("user:", "KEY-5ec4e7-do-not-leak", "")
	f.Add("", "s3cr3t/k+y", ":")
	f.Add("ab", "\x00\xff\xfe\xfd\xfc\xfb\xfa", "tail")
	f.Fuzz(func(t *testing.T, prefix, secret, suffix string) {
		runs := base64Runs(secret)
		for _, run := range runs {
			if run == "REDACTED" {
				return // the replacement itself would match
			}
		}
		if len(secret) >= 7 && len(runs) != 6 {
			t.Fatalf("%d runs for a secret of %d bytes, want 6", len(runs), len(secret))
		}
		r := NewRedactor(secret)
		if r == nil {
			return
		}
		plain := []byte(prefix + secret + suffix)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			in := "Authorization: Basic " + enc.EncodeToString(plain) + "\n"
			out := r.String(in)
			for _, run := range runs {
				if strings.Contains(out, run) {
					t.Fatalf("text(%q) = %q still holds %q", in, out, run)
				}
			}
			if len(secret) >= 7 && out == in {
				t.Fatalf("text(%q) redacted nothing", in)
			}
		}
	})
}

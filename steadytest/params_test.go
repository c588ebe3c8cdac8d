package steadytest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestParseLimit(t *testing.T) {
	cases := []struct {
		name    string
		raw     string
		present bool
		want    int
		ok      bool
	}{
		{"absent", "", false, 100, true},
		{"plain", "25", true, 25, true},
		{"leading zeros", "007", true, 7, true},
		{"at max", "1000", true, 1000, true},
		{"clamped", "1001", true, 1000, true},
		{"huge is clamped", "99999999999999999999999", true, 1000, true},
		{"zero", "0", true, 0, false},
		{"empty", "", true, 0, false},
		{"negative", "-1", true, 0, false},
		{"plus", "+1", true, 0, false},
		{"space", " 1", true, 0, false},
		{"decimal", "1.0", true, 0, false},
		{"hex", "0x10", true, 0, false},
		{"non-ASCII digit", "١", true, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseLimit(c.raw, c.present, 100, 1000)
			if (err == nil) != c.ok || got != c.want {
				t.Errorf("parseLimit(%q) = %d, %v; want %d, ok %v", c.raw, got, err, c.want, c.ok)
			}
		})
	}
}

func TestCursorRoundTripAndRejects(t *testing.T) {
	for _, off := range []int{0, 1, 100, 99_999_000} {
		got, err := decodeCursor(encodeCursor(off))
		if err != nil || got != off {
			t.Errorf("decodeCursor(encodeCursor(%d)) = %d, %v", off, got, err)
		}
	}
	for _, c := range []string{
		"", "garbage", "100", "!!!!",
		encodeCursor(5) + "=",                  // padding the server never sends
		b64("o1:"), b64("o1:-1"), b64("o1:+1"), // no digits, signs
		b64("o1:01"), b64("o1: 1"), b64("o2:1"), // non-canonical, other version
		b64("o1:99999999999999999999"),                      // saturating would alias it
		"bzE6MzA\r", "bzE6\nMzA", "\r\n" + encodeCursor(30), // base64 skips CR and LF
	} {
		if off, err := decodeCursor(c); err == nil {
			t.Errorf("decodeCursor(%q) = %d, want an error", c, off)
		}
	}
}

func b64(s string) string {
	return strings.TrimRight(urlB64(s), "=")
}

func urlB64(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var b strings.Builder
	for i := 0; i < len(s); i += 3 {
		var n uint32
		k := min(3, len(s)-i)
		for j := 0; j < 3; j++ {
			n <<= 8
			if j < k {
				n |= uint32(s[i+j])
			}
		}
		for j := 0; j < k+1; j++ {
			b.WriteByte(alphabet[(n>>(18-6*j))&63])
		}
	}
	return b.String()
}

func TestParseIDs(t *testing.T) {
	cases := []struct {
		in   []string
		want string
		ok   bool
	}{
		{[]string{"1,2,3"}, "1|2|3", true},
		{[]string{"1", "2,3"}, "1|2|3", true},
		{[]string{" a , b "}, "a|b", true},
		{nil, "", false},
		{[]string{""}, "", false},
		{[]string{"1,"}, "", false},
		{[]string{",1"}, "", false},
	}
	for _, c := range cases {
		got, err := parseIDs(c.in)
		if (err == nil) != c.ok || strings.Join(got, "|") != c.want {
			t.Errorf("parseIDs(%q) = %q, %v; want %q, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestKeptQueryKeepsOrderAndEncoding(t *testing.T) {
	got := keptQuery("b=2&limit=5&a=%20x&api%5Fkey=s&offset=3&&c", "limit", "offset", "api_key", "")
	if want := "b=2&a=%20x&c"; got != want {
		t.Errorf("keptQuery = %q, want %q", got, want)
	}
	// Bytes that cannot stand in a query are escaped; valid escapes are kept.
	if got, want := keptQuery("q=a b#c>d%zz%41\"é"), "q=a%20b%23c%3Ed%25zz%41%22%C3%A9"; got != want {
		t.Errorf("keptQuery = %q, want %q", got, want)
	}
}

func TestDrawIsAPureFunction(t *testing.T) {
	// The same inputs give the same bits; each input changes them.
	a := draw(1, pageKey("items", "0", "100"), 1)
	if a != draw(1, pageKey("items", "0", "100"), 1) {
		t.Fatal("draw is not deterministic")
	}
	for name, b := range map[string]uint64{
		"seed":    draw(2, pageKey("items", "0", "100"), 1),
		"page":    draw(1, pageKey("items", "100", "100"), 1),
		"limit":   draw(1, pageKey("items", "0", "10"), 1),
		"attempt": draw(1, pageKey("items", "0", "100"), 2),
		"split":   draw(1, pageKey("items", "01", "00"), 1),
	} {
		if a == b {
			t.Errorf("changing the %s did not change the draw", name)
		}
	}
	// Over many pages the draws are close to uniform.
	const n = 100_000
	below := 0
	for p := range n {
		if unit(draw(7, pageKey("items", strconv.Itoa(p*100), "100"), 1)) < 0.25 {
			below++
		}
	}
	if below < n/4-n/100 || below > n/4+n/100 {
		t.Errorf("%d of %d draws below 0.25, want about %d", below, n, n/4)
	}
}

// FuzzDecodeCursor: any cursor either decodes to an offset that re-encodes
// to the same cursor, or is refused; nothing panics.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{encodeCursor(0), encodeCursor(1000), "garbage", "", "bzE6MDE", "bzE6"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		off, err := decodeCursor(c)
		if err != nil {
			if _, ok := err.(*paramError); !ok {
				t.Fatalf("error %T, want *paramError", err)
			}
			return
		}
		if off < 0 || encodeCursor(off) != c {
			t.Fatalf("decodeCursor(%q) = %d, which encodes as %q", c, off, encodeCursor(off))
		}
	})
}

// FuzzItemsQuery sends any query to the items endpoint in every style:
// the answer is a 200 page of valid JSON or a 400 JSON error, never a
// panic or another status.
func FuzzItemsQuery(f *testing.F) {
	for _, q := range []string{"", "limit=10", "limit=abc", "offset=5&limit=3", "cursor=" + encodeCursor(7), "cursor=%ZZ", "limit=0", "offset=99999999999999999999", "limit=10&limit=20", "ids=1,2"} {
		f.Add(q, uint8(0))
	}
	handlers := make([]*Handler, 3)
	for i := range handlers {
		h, err := NewHandler(ServerOptions{Rows: 50, Style: Style(i), MaxLimit: 20, DefaultLimit: 5})
		if err != nil {
			f.Fatal(err)
		}
		handlers[i] = h
	}
	f.Fuzz(func(t *testing.T, query string, style uint8) {
		h := handlers[int(style)%len(handlers)]
		path := ItemsPath
		if style >= 128 {
			path = LookupPath
		}
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil)
		req.URL.RawQuery = query
		req.RequestURI = req.URL.RequestURI()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusOK, http.StatusBadRequest:
		default:
			if !(w.Code == http.StatusRequestURITooLong && len(req.RequestURI) > DefaultMaxURLBytes) {
				t.Fatalf("query %q: status %d", query, w.Code)
			}
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("query %q: invalid JSON %q", query, w.Body.Bytes())
		}
		for _, m := range linkTargets.FindAllStringSubmatch(w.Header().Get("Link"), -1) {
			u, err := url.Parse(m[1])
			if err != nil || u.Host != "127.0.0.1" || u.Path != ItemsPath {
				t.Fatalf("query %q: Link target %q (%v)", query, m[1], err)
			}
			if off, err := strconv.Atoi(u.Query().Get("offset")); err != nil || off < 0 || off >= 50 {
				t.Fatalf("query %q: Link target %q names no page of the collection", query, m[1])
			}
		}
	})
}

var linkTargets = regexp.MustCompile(`<([^>]*)>`)

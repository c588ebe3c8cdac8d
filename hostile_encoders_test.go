package steady_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/internal/wiretest"
)

// realEncodings is reservedKey as real encoders of other languages write
// it, produced by the commands named (Python 3's urllib.parse, Node's
// globals and WHATWG URL), so that the key watch and the redactor are held
// to what servers and clients actually send, not only to wiretest.Forms,
// which is ours. The Node ones are checked live by
// TestRealEncodingsAreNodes.
var realEncodings = []struct{ name, js, form string }{
	{"Python quote", "", `KEY%2Br3s/erv%3Ded%3Ak%40y%21%2A%27%28x%29~%20sp%24c%26%3B%2C`},
	{"Python quote safe=''", "", `KEY%2Br3s%2Ferv%3Ded%3Ak%40y%21%2A%27%28x%29~%20sp%24c%26%3B%2C`},
	{"Python quote_plus", "", `KEY%2Br3s%2Ferv%3Ded%3Ak%40y%21%2A%27%28x%29~+sp%24c%26%3B%2C`},
	{"JS encodeURIComponent", "encodeURIComponent(k)", `KEY%2Br3s%2Ferv%3Ded%3Ak%40y!*'(x)~%20sp%24c%26%3B%2C`},
	{"JS encodeURI", "encodeURI(k)", `KEY+r3s/erv=ed:k@y!*'(x)~%20sp$c&;,`},
	{"URLSearchParams (and Java's URLEncoder)", "new URLSearchParams({a: k}).toString().slice(2)",
		`KEY%2Br3s%2Ferv%3Ded%3Ak%40y%21*%27%28x%29%7E+sp%24c%26%3B%2C`},
	{"JS escape", "escape(k)", `KEY+r3s/erv%3Ded%3Ak@y%21*%27%28x%29%7E%20sp%24c%26%3B%2C`},
	{"WHATWG URL path", "new URL('https://x.example/p/' + k).pathname.slice(3)", `KEY+r3s/erv=ed:k@y!*'(x)~%20sp$c&;,`},
}

// Each real encoding of the key, in the path of a redirect from the key's
// host to another: nothing reaches the other host, the error and the
// events hold no form of the key, a text holding the encoding as it is
// is a finding of the watch, and the client's redactor leaves no form of
// it in that text.
func TestHostileKeyInRealEncoders(t *testing.T) {
	red := credentials.NewRedactor(reservedKey)
	for _, e := range realEncodings {
		t.Run(e.name, func(t *testing.T) {
			var planted []wiretest.Leak
			t.Run("the watch sees it", func(t *testing.T) {
				w := wiretest.For(t)
				w.Secret(reservedKey)
				w.Text("saved next link", "https://api.example.gov/v1/"+e.form+"/items?page=2")
				planted = w.Findings()
				w.Forget()
			})
			if len(planted) != 1 {
				t.Errorf("the watch found %d leaks in a text holding %s; want 1", len(planted), e.form)
			}
			w := wiretest.For(t)
			w.Text("redacted", red.String("https://api.example.gov/v1/"+e.form+"/items?page=2"))
			redirectKeyAway(t, w, e.form)
		})
	}
}

// The Node encodings of realEncodings are what Node writes today: node
// (which .ci/run installs) encodes the key each way, and each result must
// equal the table's. Absent node fails under CI and skips elsewhere.
func TestRealEncodingsAreNodes(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed; .ci/run installs it")
		}
		t.Skip("node is not installed; skipping outside CI")
	}
	var exprs []string
	for _, e := range realEncodings {
		if e.js != "" {
			exprs = append(exprs, e.js)
		}
	}
	k, _ := json.Marshal(reservedKey)
	script := "const k = " + string(k) + "; console.log(JSON.stringify([" + strings.Join(exprs, ", ") + "]))"
	out, err := exec.Command(node, "-e", script).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(exprs) {
		t.Fatalf("node printed %q: %v", out, err)
	}
	i := 0
	for _, e := range realEncodings {
		if e.js == "" {
			continue
		}
		if got[i] != e.form {
			t.Errorf("%s: node writes %s; the table says %s", e.name, got[i], e.form)
		}
		i++
	}
}

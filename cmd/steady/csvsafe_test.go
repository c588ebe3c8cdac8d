package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// CSV cells hold no raw control character and no live formula: a server's
// \u001b stays escaped text, and =, +, -, @, tab and CR at a text cell's
// start get a leading '. --csv-raw writes the cells as sent.
func TestHarvestCSVCellsAreSafe(t *testing.T) {
	page := `[{"f":"=HYPERLINK(\"http://x\")","esc":"\u001b]0;pwned\u0007red","n":-3,"p":"+1","at":"@SUM(A1)","tab":"\tx","cr":"\rx","ml":"a\nb","=h":"plain"}]`
	srv := newPageServer(t, page)
	cases := []struct {
		args []string
		want []string
	}{
		{nil, []string{`'=HYPERLINK("http://x")`, `\x1b]0;pwned\ared`, "-3", "'+1", "'@SUM(A1)", "'\tx", `'\rx`, "a\nb", "plain"}},
		{[]string{"--csv-raw"}, []string{`=HYPERLINK("http://x")`, "\x1b]0;pwned\x07red", "-3", "+1", "@SUM(A1)", "\tx", "\rx", "a\nb", "plain"}},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "rows.csv")
		if code, _, errText := cli(t, append([]string{"harvest", "-q", "--pages", "link", srv.URL, "-o", out}, c.args...)...); code != exitOK {
			t.Fatalf("%v: exit %d, %s", c.args, code, errText)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if c.args == nil && (bytes.ContainsAny(b, "\x1b\x07\r")) {
			t.Errorf("the CSV holds raw control bytes: %q", b)
		}
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("%v: %d rows, %v: %q", c.args, len(rows), err, b)
		}
		wantHeader := []string{"f", "esc", "n", "p", "at", "tab", "cr", "ml", "'=h"}
		if c.args != nil {
			wantHeader[8] = "=h"
		}
		if !reflect.DeepEqual(rows[0], wantHeader) {
			t.Errorf("%v: header %q, want %q", c.args, rows[0], wantHeader)
		}
		if !reflect.DeepEqual(rows[1], c.want) {
			t.Errorf("%v: cells %q\nwant %q", c.args, rows[1], c.want)
		}
	}
}

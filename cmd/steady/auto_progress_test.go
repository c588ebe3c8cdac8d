package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// When --pages auto settles on another style, the first page is fetched
// again by the walk of that style: the progress and the closing tally
// count its rows once, as the file holds them, for every style it can
// switch to (the XML listing through its probe included).
func TestHarvestAutoCountsTheFirstPageOnce(t *testing.T) {
	for _, c := range styleRuns {
		t.Run(c.name, func(t *testing.T) {
			srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1234, Style: c.style})
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "rows.jsonl")
			code, _, errText := cli(t, "harvest", "-v", srv.URL+steadytest.ItemsPath+c.query, "-o", out)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errText)
			}
			if !strings.Contains(errText, "--pages "+c.pages) {
				t.Fatalf("auto did not settle on --pages %s: %s", c.pages, errText)
			}
			done := regexp.MustCompile(`harvested (\d+) rows in (\d+) pages`).FindStringSubmatch(errText)
			lines := regexp.MustCompile(`progress: (\d+) pages?, (\d+)\D`).FindAllStringSubmatch(errText, -1)
			if done == nil || len(lines) == 0 {
				t.Fatalf("no closing line or no progress line: %s", errText)
			}
			if last := lines[len(lines)-1]; done[1] != "1234" || last[2] != done[1] || last[1] != done[2] {
				t.Errorf("progress ended at %s pages and %s rows; the harvest wrote %s rows in %s pages:\n%s", last[1], last[2], done[1], done[2], errText)
			}
		})
	}
}

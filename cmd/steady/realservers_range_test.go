package main

import (
	"strings"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// No PostgREST can be installed here (no registry serves the server), so
// the Range protocol it pages by (Range-Unit: items, Range: a-b, answers
// 206 or 200 with Content-Range a-b/total, 416 past the end) is served by
// steadytest, the one server here not started as another program; the cut
// connections are toxiproxy's all the same. Its MaxLimit is PostgREST's
// db-max-rows: a request without Range gets the first 100 rows, 206, with
// the total in Content-Range, from which --pages auto proves the style.
func TestRealRangeProtocol(t *testing.T) {
	t.Parallel() // each waits mostly on backoffs after cuts
	if testing.Short() {
		t.Skip("runs the built binary through toxiproxy")
	}
	const rows = 2345
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: rows, Style: steadytest.Range, MaxLimit: 100, LogLimit: -1})
	defer srv.Close()
	c := newCutter(t, strings.TrimPrefix(srv.URL, "http://"))
	harvestCut(t, c, "http://"+c.addr+steadytest.ItemsPath, []string{"--pages", "range:100", "--items", ""},
		func(out []byte) { checkOnce(t, "uncut run", jsonlIDs(t, out, "id"), seqIDs(1, rows), true) },
		"Range-Unit: items", "Range: 0-99")
}

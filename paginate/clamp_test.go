package paginate_test

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/paginate"
)

// clampHandler serves rows rows as json-server 1.x does: a page number past
// the last answers the last page again, with the counts around the rows.
// ignore serves the first page for every page number instead, as a server
// that does not know the paging parameter.
func clampHandler(rows int, ignore bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		per, _ := strconv.Atoi(r.URL.Query().Get("_per_page"))
		page, _ := strconv.Atoi(r.URL.Query().Get("_page"))
		pages := (rows + per - 1) / per
		page = min(max(page, 1), pages)
		if ignore {
			page = 1
		}
		data := ""
		for id := (page-1)*per + 1; id <= min(page*per, rows); id++ {
			if data != "" {
				data += ","
			}
			data += fmt.Sprintf(`{"id":%d}`, id)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"first":1,"last":%d,"pages":%d,"items":%d,"data":[%s]}`, pages, pages, rows, data)
	}
}

// A page number past the announced end that the server clamps to its last
// page ends the walk complete, without the repeated rows, whether the pages
// are fetched one at a time or ahead; json-server 1.x does this whenever the
// rows are a multiple of the page size (ADR 0355).
func TestPageNumberPastTheEndClamped(t *testing.T) {
	for _, conc := range []int{1, 4} {
		for _, rows := range []int{250, 249} {
			t.Run(fmt.Sprintf("concurrency %d, %d rows", conc, rows), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					tr := &memTransport{h: clampHandler(rows, false), latency: time.Millisecond}
					req := mustRequest(t, "http://api.test/rows?_page=1&_per_page=50")
					got, w, err := walkIDs(t, &http.Client{Transport: tr}, req,
						paginate.Options{Next: paginate.PageNumber("_page", "_per_page"), Items: "data", Concurrency: conc})
					if err != nil {
						t.Fatal(err)
					}
					checkSequence(t, got, 1, rows)
					if s := w.Summary(); !s.Complete || s.Next != nil || s.Items != rows || s.Pages != 5 {
						t.Errorf("summary %+v; want complete, 5 pages of %d rows", s, rows)
					}
				})
			})
		}
	}
}

// The clamp is taken only past the announced end: a server that ignores the
// page number repeats its first page inside the total, which stays a loop.
func TestPageNumberIgnoredStillLoops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &memTransport{h: clampHandler(250, true), latency: time.Millisecond}
		req := mustRequest(t, "http://api.test/rows?_page=1&_per_page=50")
		got, w, err := walkIDs(t, &http.Client{Transport: tr}, req,
			paginate.Options{Next: paginate.PageNumber("_page", "_per_page"), Items: "data"})
		if !errors.Is(err, paginate.ErrLoop) {
			t.Fatalf("err = %v; want ErrLoop", err)
		}
		checkSequence(t, got, 1, 50)
		if s := w.Summary(); s.Complete {
			t.Errorf("summary %+v; a walk that looped is not complete", s)
		}
	})
}

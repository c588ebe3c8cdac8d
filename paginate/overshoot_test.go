package paginate_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/steadytest"
)

// A walk that fetches pages ahead spends no request the sequential walk
// would not make where the server announced how far its pages go (a
// total, or json-server 1.x's page count), and at most Concurrency-1 more
// where it announced nothing: the pages predicted past an end nobody
// named. Quota is spent on rows, not on guesses.
func TestConcurrentPagesSpendNoRequestPastAnAnnouncedEnd(t *testing.T) {
	const conc = 8
	for _, c := range styleCases {
		if c.server == steadytest.S3 || c.style == "offset:_start" {
			continue // not computable ahead, or one page
		}
		for _, announced := range []bool{true, false} {
			for _, rows := range []int{2345, 2400} {
				t.Run(fmt.Sprintf("%s/announced=%v/%d rows", c.name, announced, rows), func(t *testing.T) {
					requests := func(concurrency int) int {
						var n int
						synctest.Test(t, func(t *testing.T) {
							next, _ := paginate.ParseStyle(c.style)
							var h http.Handler = styleHandler(t, c.server, rows, steadytest.Faults{})
							if !announced {
								h = stripTotals(h)
							}
							tr := &memTransport{h: h, latency: 20 * time.Millisecond}
							got, _, err := walkIDs(t, &http.Client{Transport: tr}, mustRequest(t, "http://api.test/items"+c.query),
								paginate.Options{Next: next, Items: c.items, Concurrency: concurrency})
							if err != nil {
								t.Fatal(err)
							}
							checkSequence(t, got, 1, rows)
							n = tr.requests
						})
						return n
					}
					seq, ahead := requests(1), requests(conc)
					most := seq
					if !announced {
						most += conc - 1
					}
					t.Logf("%d requests one at a time, %d with %d at once", seq, ahead, conc)
					if ahead > most {
						t.Errorf("%d requests with %d at once, %d one at a time: want at most %d", ahead, conc, seq, most)
					}
				})
			}
		}
	}
}

// stripTotals serves what h serves with no total in it: no X-Total-Count,
// a Content-Range of "a-b/*", no page count or item count in the body, and
// for a range past the end an empty page, as PostgREST answers without
// Prefer: count=exact.
func stripTotals(h http.Handler) http.Handler {
	counts := regexp.MustCompile(`,"(last|pages|items)":[0-9]+`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("X-Total-Count")
		if cr := w.Header().Get("Content-Range"); cr != "" {
			if i := strings.LastIndexByte(cr, '/'); i >= 0 && !strings.HasPrefix(cr, "*") {
				w.Header().Set("Content-Range", cr[:i]+"/*")
			}
		}
		body := counts.ReplaceAll(rec.Body.Bytes(), nil)
		if rec.Code == http.StatusRequestedRangeNotSatisfiable {
			rec.Code, body = http.StatusOK, []byte("[]")
			w.Header().Set("Content-Range", "*/*")
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
}

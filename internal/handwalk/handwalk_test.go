package handwalk_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/steadyhttp/steady/internal/handwalk"
	"github.com/steadyhttp/steady/internal/wiretest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(wiretest.Main(m)) }

// The walk follows relative next links to the last page and counts every
// page and feature; a page that does not decode ends it with the pages
// before it counted.
func TestWalk(t *testing.T) {
	const n = 3
	var broken atomic.Int64 // the page that does not decode
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if p == 0 {
			p = 1
		}
		if int64(p) == broken.Load() {
			fmt.Fprint(w, `{"features":[`)
			return
		}
		fmt.Fprintf(w, `{"features":[%d,%d],"links":[{"rel":"self","href":"?page=%d"}`, p, p, p)
		if p < n {
			fmt.Fprintf(w, `,{"rel":"next","href":"items?page=%d"}`, p+1)
		}
		fmt.Fprint(w, `]}`)
	}))
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()

	if pages, items, err := handwalk.Walk(client, srv.URL+"/items"); err != nil || pages != n || items != 2*n {
		t.Fatalf("walked %d pages, %d items, %v; want %d, %d, nil", pages, items, err, n, 2*n)
	}
	broken.Store(2)
	if pages, items, err := handwalk.Walk(client, srv.URL+"/items"); pages != 1 || items != 2 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("walked %d pages, %d items, %v; want 1, 2 and the decoding error", pages, items, err)
	}
}

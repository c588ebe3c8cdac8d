package paginate_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/steadytest"
)

// Auto on an S3 listing delivers its first page without items, rather than
// failing it as JSON, and ends with ErrUndetected naming XMLCursor; Detect
// proves the listing from that page, and its style walks every key.
func TestAutoOnXMLNamesXMLCursor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &memTransport{h: styleHandler(t, steadytest.S3, 250, steadytest.Faults{}), latency: time.Millisecond}
		client := &http.Client{Transport: tr}
		req := mustRequest(t, "http://api.test/items?list-type=2&max-keys=100")
		w := paginate.NewWalk(client, req, paginate.Options{Next: paginate.Auto, Items: paginate.FindItems})
		var pages []*paginate.Page
		var err error
		for p, perr := range w.All(t.Context()) {
			if perr != nil {
				err = perr
				break
			}
			pages = append(pages, p)
		}
		if len(pages) != 1 || pages[0].Items.Len() != 0 {
			t.Fatalf("%d pages before the error; want the first, without items", len(pages))
		}
		var pe *paginate.Error
		if !errors.Is(err, paginate.ErrUndetected) || !errors.As(err, &pe) || pe.Page != 1 {
			t.Fatalf("err = %v; want ErrUndetected on page 1", err)
		}
		if s := w.Summary(); s.Complete || s.Items != 0 {
			t.Errorf("summary %+v; a walk Auto could not follow is not complete", s)
		}
		d, derr := paginate.Detect(pages[0])
		if derr != nil || d.Next == nil {
			t.Fatalf("Detect: %+v, %v", d, derr)
		}
		got, _, err := walkIDs(t, client, req, paginate.Options{Next: d.Next})
		if err != nil {
			t.Fatal(err)
		}
		checkSequence(t, got, 1, 250)
	})
}

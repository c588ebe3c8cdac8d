package paginate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/steadyhttp/steady/paginate"
)

// The first page's announcement of the collection's size is in the
// summary, wherever the server put it; a garbled one is no announcement.
func TestWalkSummaryCarriesAnnouncedTotal(t *testing.T) {
	cases := []struct {
		name   string
		header string // X-Total-Count
		body   string // page 1 (page 2 announces 999 everywhere)
		field  string
		items  string
		want   int64
	}{
		{"header", "20000", `[{"id":1}]`, "", "", 20000},
		{"header with spaces", " 42 ", `[{"id":1}]`, "", "", 42},
		{"OGC numberMatched", "", `{"numberMatched":1234,"numberReturned":1,"features":[{"id":1}]}`, "", "features", 1234},
		{"header wins over numberMatched", "7", `{"numberMatched":1234,"features":[]}`, "", "features", 7},
		{"named field", "", `{"meta":{"total":77},"data":[{"id":1}]}`, "meta.total", "data", 77},
		{"named field over the header", "5", `{"meta":{"total":77},"data":[]}`, "meta.total", "data", 77},
		{"named field absent", "5", `{"data":[]}`, "meta.total", "data", 0},
		{"none", "", `[{"id":1}]`, "", "", 0},
		{"negative", "-5", `[]`, "", "", 0},
		{"exponent", "", `{"numberMatched":1e3,"features":[]}`, "", "features", 0},
		{"fraction", "", `{"numberMatched":12.0,"features":[]}`, "", "features", 0},
		{"string", "", `{"numberMatched":"100","features":[]}`, "", "features", 0},
		{"overflow", "99999999999999999999", `[]`, "", "", 0},
		{"nested numberMatched is not the default", "", `{"context":{"numberMatched":5},"features":[]}`, "", "features", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, false, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("p") == "2" {
					w.Header().Set("X-Total-Count", "999")
					fmt.Fprint(w, pageTwo(c.items))
					return
				}
				if c.header != "" {
					w.Header().Set("X-Total-Count", c.header)
				}
				w.Header().Set("Link", `</?p=2>; rel="next"`)
				fmt.Fprint(w, c.body)
			})
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
			walk := paginate.NewWalk(srv.client(t), req, paginate.Options{Items: c.items, TotalField: c.field})
			for _, err := range walk.All(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
			}
			if got := walk.Summary().Total; got != c.want {
				t.Fatalf("Total %d, want %d", got, c.want)
			}
		})
	}
}

func pageTwo(items string) string {
	if items == "" {
		return `[]`
	}
	return fmt.Sprintf(`{"numberMatched":999,"meta":{"total":999},%q:[]}`, items)
}

func TestWalkTotalFieldValidated(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "https://api.example.gov/", nil)
	for _, err := range paginate.Pages(context.Background(), nil, req, paginate.Options{TotalField: "meta..total"}) {
		if !errors.Is(err, paginate.ErrOptions) {
			t.Fatalf("err %v, want ErrOptions", err)
		}
	}
}

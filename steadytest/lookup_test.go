package steadytest_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

type lookupBody struct {
	Items   []steadytest.Row `json:"items"`
	Missing []string         `json:"missing"`
}

func TestLookupReturnsOneRowPerID(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{Rows: 100})
	c := newClient(t)
	cases := []struct {
		name    string
		query   string
		ids     []int
		missing []string
	}{
		{"in request order", "ids=5,3,100", []int{5, 3, 100}, nil},
		{"repeated parameter", "ids=1,2&ids=3", []int{1, 2, 3}, nil},
		{"spaces trimmed", "ids=1,%202", []int{1, 2}, nil},
		{"duplicates kept", "ids=7,7", []int{7, 7}, nil},
		{"unknown ids listed", "ids=1,101,0,a,007", []int{1}, []string{"101", "0", "a", "007"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := get(t, c, s.URL+steadytest.LookupPath+"?"+tc.query)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %s: %s", resp.Status, body)
			}
			var got lookupBody
			decode(t, body, &got)
			if len(got.Items) != len(tc.ids) {
				t.Fatalf("got %d rows, want %d", len(got.Items), len(tc.ids))
			}
			for i, id := range tc.ids {
				if got.Items[i] != steadytest.RowFor(id) {
					t.Errorf("row %d = %+v, want row %d", i, got.Items[i], id)
				}
			}
			if strings.Join(got.Missing, ",") != strings.Join(tc.missing, ",") {
				t.Errorf("missing = %q, want %q", got.Missing, tc.missing)
			}
		})
	}
}

func TestLookupRefusesBadOrLongRequests(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{MaxURLBytes: 100})
	c := newClient(t)
	ids := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = strconv.Itoa(i + 1)
		}
		return strings.Join(parts, ",")
	}
	// "/lookup?ids=" is 12 bytes; the ids 1..32 take 86 more, 1..33 take 89.
	cases := []struct {
		name   string
		query  string
		status int
	}{
		{"just under the limit", "ids=" + ids(32), 200},
		{"over the limit", "ids=" + ids(33), http.StatusRequestURITooLong},
		{"no ids", "", http.StatusBadRequest},
		{"empty element", "ids=1,,2", http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := steadytest.LookupPath + "?" + tc.query
			resp, body := get(t, c, s.URL+target)
			if resp.StatusCode != tc.status {
				t.Errorf("%d-byte target: status %d, want %d (%s)", len(target), resp.StatusCode, tc.status, body)
			}
		})
	}
}

func TestLookupBoundaryIsInclusive(t *testing.T) {
	target := steadytest.LookupPath + "?ids=1,2,3"
	for _, c := range []struct {
		max    int
		status int
	}{{len(target), 200}, {len(target) - 1, http.StatusRequestURITooLong}} {
		s := newServer(t, steadytest.ServerOptions{MaxURLBytes: c.max})
		if resp, _ := get(t, newClient(t), s.URL+target); resp.StatusCode != c.status {
			t.Errorf("MaxURLBytes %d, target %d bytes: status %d, want %d", c.max, len(target), resp.StatusCode, c.status)
		}
	}
}

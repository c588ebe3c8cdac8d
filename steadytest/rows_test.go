package steadytest_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady/steadytest"
)

func TestServedRowsAreExactlyRowFor(t *testing.T) {
	// Rows are written by hand for speed; the bytes must be what
	// encoding/json makes of RowFor, for every word and every kind of value.
	const n = 1000
	s := newServer(t, steadytest.ServerOptions{Rows: n})
	_, body := get(t, newClient(t), s.URL+steadytest.ItemsPath+"?limit=1000")
	want := make([]steadytest.Row, n)
	for i := range want {
		want[i] = steadytest.RowFor(i + 1)
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != string(wantJSON) {
		t.Fatalf("served rows differ from encoding/json:\n got %.300s\nwant %.300s", body, wantJSON)
	}
}

func TestRowForIsDeterministicAndVaried(t *testing.T) {
	r := steadytest.RowFor(42)
	if r != steadytest.RowFor(42) {
		t.Fatal("RowFor(42) differs between calls")
	}
	if r.ID != 42 || r.Timestamp != time.Date(2026, 1, 1, 0, 25, 54, 0, time.UTC) {
		t.Errorf("RowFor(42) = %+v", r)
	}
	names, values := map[string]bool{}, map[float64]bool{}
	escapes := 0
	for id := 1; id <= 500; id++ {
		r := steadytest.RowFor(id)
		names[r.Name], values[r.Value] = true, true
		if r.Value < -10000 || r.Value > 10000 {
			t.Errorf("row %d value %v out of range", id, r.Value)
		}
		b, _ := json.Marshal(r.Name)
		if len(b) != len(r.Name)+2 {
			escapes++
		}
	}
	if len(names) != 500 || len(values) < 490 || escapes == 0 {
		t.Errorf("%d distinct names, %d distinct values, %d names needing escapes: want variety", len(names), len(values), escapes)
	}
}

func TestHeadServesHeadersOnly(t *testing.T) {
	s := newServer(t, steadytest.ServerOptions{Rows: 10, Faults: steadytest.Faults{
		Script: map[int]steadytest.Fault{1: {Kind: steadytest.Truncate}},
	}})
	resp, err := newClient(t).Head(s.URL + steadytest.ItemsPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength <= 0 {
		t.Errorf("HEAD: %s, Content-Length %d", resp.Status, resp.ContentLength)
	}
	if k := s.Requests()[0].Fault.Kind; k != steadytest.None {
		t.Errorf("a body fault applied to HEAD: %v", k)
	}
}

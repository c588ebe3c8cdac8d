package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/retry"
)

type query struct {
	Bbox  [4]float64 `json:"bbox"`
	Layer string     `json:"layer"`
}

type rows struct {
	Count int               `json:"count"`
	Names []string          `json:"names"`
	Extra map[string]string `json:"extra,omitempty"`
}

func queries(n int) []query {
	qs := make([]query, n)
	for i := range qs {
		qs[i] = query{Bbox: [4]float64{float64(i), 0, float64(i) + 0.5, 1}, Layer: "roads"}
	}
	return qs
}

// rowsFetcher answers each query with a few rows; queries listed in fail
// fail transiently on their first call, with a server wait hint.
type rowsFetcher struct {
	fail      map[int]bool
	calls     counter
	successes counter
}

func (f *rowsFetcher) fetch(ctx context.Context, q query) (rows, error) {
	i := int(q.Bbox[0])
	if f.calls.add(i) == 1 && f.fail[i] {
		return rows{}, &retry.Error{Method: "GET", URL: "http://api.test/q", Attempts: 1,
			Reason: retry.ErrRetryAfter, Status: 429, RetryAfter: 90 * time.Second}
	}
	f.successes.add(i)
	r := rows{Count: i, Names: []string{fmt.Sprint("n", i), "ü"}}
	if i%3 == 0 {
		r.Extra = map[string]string{"k": "v"}
	}
	return r, nil
}

// Save, exit, Load, resume: the result is the uninterrupted one, and no item
// is fetched successfully twice.
func TestSaveLoadRoundTrip(t *testing.T) {
	const n = 40
	items := queries(n)
	opt := fanout.Options{Concurrency: 1}
	want, err := fanout.Run(t.Context(), items, opt, (&rowsFetcher{}).fetch)
	if err != nil {
		t.Fatal(err)
	}

	f := &rowsFetcher{fail: map[int]bool{13: true}}
	_, err = fanout.Run(t.Context(), items, opt, f.fetch)
	in, ok := fanout.AsInterruption(err)
	if !ok {
		t.Fatalf("err = %v, want an interruption", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := in.Save(path); err != nil {
		t.Fatal(err)
	}
	if err := in.Save(path); err != nil { // replacing an earlier state works
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries after Save, want the state file only", len(entries))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode = %v, %v; want 0600", fi.Mode(), err)
	}

	orig := in.(*fanout.Interrupted[query, rows])
	loaded, err := fanout.Load[query, rows](path, items)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded.Completed, orig.Completed) {
		t.Errorf("loaded completed results differ from the saved ones")
	}
	if !slices.Equal(loaded.Failed, orig.Failed) || !slices.Equal(loaded.Unfinished, orig.Unfinished) {
		t.Errorf("loaded failed %v unfinished %v, saved %v %v", loaded.Failed, loaded.Unfinished, orig.Failed, orig.Unfinished)
	}
	if loaded.RetryAfter() != 90*time.Second || loaded.Error() != orig.Error() {
		t.Errorf("loaded %q (wait %v), saved %q", loaded, loaded.RetryAfter(), orig)
	}
	if _, err := loaded.Resume(t.Context()); err == nil {
		t.Errorf("Resume of a loaded state without a fetch function succeeded")
	}

	got, err := loaded.ResumeWith(t.Context(), opt, f.fetch)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resumed result differs from the uninterrupted one")
	}
	for i := range n {
		if s := f.successes.get(i); s != 1 {
			t.Errorf("item %d fetched successfully %d times, want once", i, s)
		}
	}
}

func TestLoadRefuses(t *testing.T) {
	items := queries(10)
	_, err := fanout.Run(t.Context(), items, fanout.Options{Concurrency: 1}, (&rowsFetcher{fail: map[int]bool{4: true}}).fetch)
	in, ok := fanout.AsInterruption(err)
	if !ok {
		t.Fatalf("err = %v, want an interruption", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := in.Save(path); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	saved, _ := os.ReadFile(path)
	changed := queries(10)
	changed[7].Layer = "rivers"

	for _, tc := range []struct {
		name  string
		path  string
		items []query
		want  error
	}{
		{"fewer items", path, items[:9], fanout.ErrStateMismatch},
		{"more items", path, queries(11), fanout.ErrStateMismatch},
		{"one item changed", path, changed, fanout.ErrStateMismatch},
		{"missing file", filepath.Join(dir, "none.json"), items, fs.ErrNotExist},
		{"not JSON", write("bad.json", "{"), items, fanout.ErrStateFormat},
		{"another format", write("v2.json", strings.Replace(string(saved), "fanout-state/v1", "fanout-state/v2", 1)), items, fanout.ErrStateFormat},
		{"index out of range", write("range.json", strings.Replace(string(saved), `"index":0,`, `"index":10,`, 1)), items, fanout.ErrStateFormat},
		{"completed twice", write("dup.json", strings.Replace(string(saved), `"index":1,`, `"index":0,`, 1)), items, fanout.ErrStateFormat},
		{"failed and completed", write("both.json", strings.Replace(string(saved), `"failures":[{"index":4`, `"failures":[{"index":0`, 1)), items, fanout.ErrStateFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fanout.Load[query, rows](tc.path, tc.items)
			var se *fanout.StateError
			if !errors.Is(err, tc.want) || !errors.As(err, &se) || se.Path != tc.path {
				t.Errorf("Load = %v, want a *StateError for %s matching %v", err, tc.path, tc.want)
			}
		})
	}
}

func TestSaveUnencodable(t *testing.T) {
	items := []chan int{make(chan int)}
	_, err := fanout.Run(t.Context(), items, fanout.Options{}, func(context.Context, chan int) (int, error) {
		return 0, errTransient
	})
	in, ok := fanout.AsInterruption(err)
	if !ok {
		t.Fatalf("err = %v, want an interruption", err)
	}
	path := filepath.Join(t.TempDir(), "state.json")
	var se *fanout.StateError
	if err := in.Save(path); !errors.As(err, &se) {
		t.Errorf("Save of unencodable items = %v, want a *StateError", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed Save left a file behind: %v", err)
	}
}

// AsInterruption finds the run's own interruption through wrapping, but not
// a nested fan-out's reported as one item's failure.
func TestAsInterruption(t *testing.T) {
	_, inner := fanout.Run(t.Context(), seq(1), fanout.Options{}, func(context.Context, int) (int, error) { return 0, errTransient })
	if !fanout.IsInterrupted(inner) || !fanout.IsInterrupted(fmt.Errorf("harvest: %w", inner)) {
		t.Fatalf("IsInterrupted(%v) = false", inner)
	}
	_, outer := fanout.Run(t.Context(), seq(2), fanout.Options{Independent: true}, func(_ context.Context, i int) (int, error) {
		if i == 1 {
			return 0, inner
		}
		return 1, nil
	})
	var pe *fanout.PartialError
	if !errors.As(outer, &pe) || fanout.IsInterrupted(outer) {
		t.Errorf("outer = %v: a nested interruption must not pass for the run's own", outer)
	}
	if fanout.IsInterrupted(nil) || fanout.IsInterrupted(errFatal) {
		t.Errorf("IsInterrupted true for a non-interruption")
	}
}

package fanout_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/steadyhttp/steady/fanout"
	"github.com/steadyhttp/steady/internal/wiretest"
)

// An item's error that holds a secret (a server echoed the key into a
// URL under a name off the credential list) reaches neither the run's
// error text nor its saved state (issue 10, item 3).
func TestSecretsNeverInInterruptedOrItsState(t *testing.T) {
	const key = "fan-0ut-k3y-5ec4e7"
	w := wiretest.For(t)
	w.Secret(key)
	cause := errors.New("temporary")
	fetch := func(_ context.Context, i int) (int, error) {
		if i == 1 {
			return 0, &transientErr{fmt.Errorf("GET https://api.example.gov/x?appid=%s&b=%s: %w",
				url.QueryEscape(key), base64.StdEncoding.EncodeToString([]byte("u:"+key)), cause)}
		}
		return i, nil
	}
	_, err := fanout.Run(context.Background(), []int{0, 1, 2}, fanout.Options{Concurrency: 1, Secrets: []string{key}}, fetch)
	in, ok := fanout.AsInterruption(err)
	if !ok {
		t.Fatalf("err %v, want an interruption", err)
	}
	if !errors.Is(err, cause) {
		t.Errorf("errors.Is no longer reaches the cause through %v", err)
	}
	w.Err("Run", err)
	dir := t.TempDir()
	if err := in.Save(filepath.Join(dir, "state.json")); err != nil {
		t.Fatal(err)
	}
	w.Dir(dir)
}

type transientErr struct{ err error }

func (e *transientErr) Error() string   { return e.err.Error() }
func (e *transientErr) Unwrap() error   { return e.err }
func (e *transientErr) Retryable() bool { return true }

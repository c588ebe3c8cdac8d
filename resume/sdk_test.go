package resume_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/steadyhttp/steady/resume"
	"github.com/steadyhttp/steady/retry"
)

// An SDK (go-github, the AWS SDK) reads the body after RoundTrip returned.
// A small answer without a validator that breaks mid-body on a real
// connection is read inside the attempt by default and re-sent, so the
// SDK reads it whole instead of a refusal to resume.
func TestSmallBodyWithoutValidatorIsResentUnderAnSDK(t *testing.T) {
	srv := cutOnce("")
	defer srv.Close()
	client := &http.Client{Transport: resume.New(retry.New(nil, retry.Policy{InitialBackoff: time.Millisecond}))}
	defer client.CloseIdleConnections()
	ctx, out := retry.WithOutcome(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != "hello, resumable world" {
		t.Fatalf("body %q, %v; want the whole body", body, err)
	}
	if out.Attempts != 2 {
		t.Errorf("%d attempts, want 2", out.Attempts)
	}
}

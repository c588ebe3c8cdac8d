package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/steadytest"
)

// --pages auto proves an S3 ListObjectsV2 listing from its first page
// (XML with NextContinuationToken), says the explicit flags, and walks
// every row once through cut connections; interrupted runs resume.
func TestHarvestAutoDetectsXMLCursor(t *testing.T) {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: 1234, Style: steadytest.S3, Faults: steadytest.Harsh(13)})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	args := []string{"harvest", "--retries", "0", srv.URL + steadytest.ItemsPath + "?list-type=2&max-keys=100", "-o", out}
	code, _, errText := cli(t, args...)
	said := errText
	for resumes := 0; resumes < 200 && (code == exitInterrupted || code == exitRateLimited); resumes++ {
		code, _, errText = cli(t, append(args, "--resume", "--retries", "20")...)
		said += errText
	}
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errText)
	}
	if !strings.Contains(said, "--pages xml:ListBucketResult/NextContinuationToken:continuation-token") {
		t.Errorf("auto did not say the XML style: %s", said)
	}
	checkExact(t, s3IDs(t, out), 1234)
}

package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// versitygwKeys is how many objects the bucket holds: not a multiple of
// the page size, so the last page is short and carries no token.
const versitygwKeys = 2345

// s3Signer signs requests with AWS Signature Version 4, as the root user
// of the gateway, for setting up the bucket; steady's walk is anonymous.
type s3Signer struct{ access, secret, region string }

func (s s3Signer) sign(req *http.Request, body []byte, now time.Time) {
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	stamp, day := now.UTC().Format("20060102T150405Z"), now.UTC().Format("20060102")
	req.Header.Set("X-Amz-Date", stamp)
	req.Header.Set("X-Amz-Content-Sha256", payload)
	signed := []string{"host", "x-amz-content-sha256", "x-amz-date"}
	headers := "host:" + req.URL.Host + "\nx-amz-content-sha256:" + payload + "\nx-amz-date:" + stamp + "\n"
	canonical := strings.Join([]string{req.Method, req.URL.EscapedPath(), canonicalQuery(req.URL.Query()),
		headers, strings.Join(signed, ";"), payload}, "\n")
	scope := day + "/" + s.region + "/s3/aws4_request"
	hashed := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + stamp + "\n" + scope + "\n" + hex.EncodeToString(hashed[:])
	key := []byte("AWS4" + s.secret)
	for _, part := range []string{day, s.region, "s3", "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	req.Header.Set("Authorization", fmt.Sprintf("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%x",
		s.access, scope, strings.Join(signed, ";"), hmacSHA256(key, toSign)))
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalQuery is the query in SigV4's form: names sorted, every name
// and value escaped as RFC 3986 unreserved characters allow.
func canonicalQuery(q url.Values) string {
	var parts []string
	for k, vs := range q {
		for _, v := range vs {
			parts = append(parts, s3Escape(k)+"="+s3Escape(v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "&")
}

func s3Escape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// do sends one signed request and fails the test unless it succeeds.
func (s s3Signer) do(t *testing.T, method, rawURL string, body []byte) {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	s.sign(req, body, time.Now())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s: %s %s", method, rawURL, res.Status, b)
	}
}

// startVersitygw starts versitygw on a posix backend in a temporary
// directory, creates the bucket rows, lets anyone list it (a bucket
// policy), and puts versitygwKeys objects into it; it returns host:port.
func startVersitygw(t *testing.T) string {
	t.Helper()
	bin := findProgram(t, "STEADY_VERSITYGW", "versitygw", ".ci/deps/versitygw", cacheBin("versitygw"))
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	s := s3Signer{access: "steadyroot", secret: "steady-test-secret-not-a-key", region: "us-east-1"}
	cmd := exec.Command(bin, "--access", s.access, "--secret", s.secret, "--region", s.region, "--port", addr, "posix", data)
	// Anonymous requests to the root are refused; any answer means it listens.
	startChild(t, "versitygw", cmd, func() bool { return answers("http://"+addr+"/", http.StatusForbidden)() })
	base := "http://" + addr + "/rows"
	s.do(t, http.MethodPut, base, nil)
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::rows"}]}`
	s.do(t, http.MethodPut, base+"?policy=", []byte(policy))
	keys := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range keys {
				s.do(t, http.MethodPut, base+"/"+s3Key(i), fmt.Appendf(nil, `{"id":%d}`, i))
			}
		})
	}
	for i := 1; i <= versitygwKeys; i++ {
		keys <- i
	}
	close(keys)
	wg.Wait()
	return addr
}

// s3Key is object i's key; zero-padded, so that S3's order is i's.
func s3Key(i int) string { return fmt.Sprintf("rows/%05d.json", i) }

// versitygw lists a bucket by ListObjectsV2: XML pages joined by
// NextContinuationToken, sent back as continuation-token.
func TestRealVersitygwListObjectsV2(t *testing.T) {
	t.Parallel() // each waits mostly on backoffs after cuts
	addr := startVersitygw(t)
	c := newCutter(t, addr)
	want := make([]string, versitygwKeys)
	for i := range want {
		want[i] = s3Key(i + 1)
	}
	harvestCut(t, c, "http://"+c.addr+"/rows?list-type=2&max-keys=100",
		[]string{"--pages", "xml:ListBucketResult/NextContinuationToken:continuation-token:ListBucketResult/Contents"},
		func(out []byte) { checkOnce(t, "uncut run", jsonlIDs(t, out, "Key"), want, true) })
}

package recipes_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/steadyhttp/steady"
	"github.com/steadyhttp/steady/resume"
	"github.com/steadyhttp/steady/retry"
)

const bucket = "recipes"

// s3World is versitygw behind the cutting proxy, and an aws.Config that
// points the SDK at the proxy.
type s3World struct {
	proxy *cutProxy
	cfg   aws.Config
}

func newS3World(t *testing.T) *s3World {
	t.Helper()
	p := newCutProxy(t, startVersityGW(t))
	cfg := aws.Config{
		Region:       "us-east-1",
		Credentials:  awscreds.NewStaticCredentialsProvider(s3Access, s3Secret, ""),
		BaseEndpoint: aws.String("http://" + p.addr()),
	}
	return &s3World{proxy: p, cfg: cfg}
}

// client is the recipe's S3 client over a steady client made with opt.
func (w *s3World) client(t *testing.T, opt steady.Options) *s3.Client {
	t.Helper()
	c, err := steady.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	// versitygw answers on one host name, so buckets go in the path.
	return s3Recipe(w.cfg, c, func(o *s3.Options) { o.UsePathStyle = true })
}

// object is n bytes no two runs share, and their hash.
func object(n int) ([]byte, [32]byte) {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 22))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b, sha256.Sum256(b)
}

func put(ctx context.Context, s3c *s3.Client, key string, body []byte) error {
	_, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
	return err
}

// getHash reads the object whole and returns its hash and length.
func getHash(ctx context.Context, s3c *s3.Client, key string) ([32]byte, int64, error) {
	out, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return [32]byte{}, 0, err
	}
	defer out.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, out.Body)
	return [32]byte(h.Sum(nil)), n, err
}

// The AWS recipe against versitygw through cut connections: an upload cut
// mid-way is re-sent from the seekable body, a download cut mid-body is
// continued by a validated Range request, a listing cut mid-body is
// re-sent whole (and so are two pages of a paginated listing, every key
// listed once), and every byte is checked by its hash.
func TestS3Recipe(t *testing.T) {
	w := newS3World(t)
	s3c := w.client(t, steady.Options{})
	ctx := context.Background()
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}

	t.Run("PutObject cut mid-upload", func(t *testing.T) {
		body, sum := object(768 << 10)
		w.proxy.cut(cutRule{line: "PUT /" + bucket + "/small", up: 300 << 10, times: 1})
		ctx, out := retry.WithOutcome(ctx)
		if err := put(ctx, s3c, "small", body); err != nil {
			t.Fatal(err)
		}
		if out.Attempts < 2 {
			t.Errorf("PutObject took %d attempts; the cut upload was not re-sent", out.Attempts)
		}
		got, n, err := getHash(context.Background(), s3c, "small")
		if err != nil || got != sum || n != int64(len(body)) {
			t.Errorf("stored object: %d bytes, hash match %v, err %v", n, got == sum, err)
		}
	})

	t.Run("GetObject cut mid-body", func(t *testing.T) {
		body, sum := object(3 << 20)
		if err := put(ctx, w.client(t, steady.Options{Policy: retry.Policy{ReplayBytes: 4 << 20}}), "big", body); err != nil {
			t.Fatal(err)
		}
		w.proxy.cut(cutRule{line: "GET /" + bucket + "/big?", down: 1 << 20, times: 2})
		ctx, out := retry.WithOutcome(ctx)
		got, n, err := getHash(ctx, s3c, "big")
		if err != nil || got != sum || n != int64(len(body)) {
			t.Fatalf("GetObject: %d bytes of %d, hash match %v, err %v", n, len(body), got == sum, err)
		}
		if out.Resumes < 2 {
			t.Errorf("%d continuations for two cuts", out.Resumes)
		}
	})

	t.Run("ListObjectsV2 cut mid-body", func(t *testing.T) {
		const keys = 60
		for i := range keys {
			if err := put(ctx, s3c, fmt.Sprintf("list/key-with-a-long-name-%03d", i), []byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		w.proxy.cut(cutRule{line: "GET /" + bucket + "?", down: 3000, times: 1})
		ctx, out := retry.WithOutcome(ctx)
		list, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("list/")})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Contents) != keys {
			t.Errorf("%d keys listed, want %d", len(list.Contents), keys)
		}
		if out.Attempts < 2 {
			t.Errorf("ListObjectsV2 took %d attempts; the cut listing was not re-sent", out.Attempts)
		}
	})

	t.Run("ListObjectsV2 pages cut", func(t *testing.T) {
		w.proxy.cut(cutRule{line: "GET /" + bucket + "?continuation-token=", down: 1500, times: 2})
		seen := map[string]bool{}
		pages := s3.NewListObjectsV2Paginator(s3c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("list/"), MaxKeys: aws.Int32(10)})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page.Contents {
				if seen[*o.Key] {
					t.Errorf("%s listed twice", *o.Key)
				}
				seen[*o.Key] = true
			}
		}
		if len(seen) != 60 {
			t.Errorf("%d keys listed over the pages, want 60", len(seen))
		}
	})

	if got := len(w.proxy.done()); got != 6 {
		t.Errorf("the proxy cut %d connections (%q), want 6", got, w.proxy.done())
	}
}

// smithy-go hands net/http the body without its Seek, so the recipe
// re-sends an upload from steady's bounded replay buffer. An upload
// beyond Policy.ReplayBytes is sent once: cut, it fails with
// resume.ErrCommitted, naming the bound, and nothing is stored; with the
// bound raised the same cut upload is re-sent.
func TestS3RecipeUploadBeyondTheReplayBound(t *testing.T) {
	w := newS3World(t)
	ctx := context.Background()
	s3c := w.client(t, steady.Options{})
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	body, sum := object(3 << 20)
	w.proxy.cut(cutRule{line: "PUT /" + bucket + "/large", up: 1 << 20, times: 2})
	err := put(ctx, s3c, "large", body)
	if !errors.Is(err, resume.ErrCommitted) {
		t.Fatalf("PutObject of 3 MiB cut mid-way: %v; want an error matching resume.ErrCommitted", err)
	}
	if _, err := s3c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("large")}); err == nil {
		t.Error("a cut upload left an object behind")
	}
	raised := w.client(t, steady.Options{Policy: retry.Policy{ReplayBytes: 4 << 20}})
	if err := put(ctx, raised, "large", body); err != nil {
		t.Fatalf("with ReplayBytes 4 MiB: %v", err)
	}
	if got, n, err := getHash(ctx, s3c, "large"); err != nil || got != sum {
		t.Errorf("stored object: %d bytes, hash match %v, err %v", n, got == sum, err)
	}
	if got := len(w.proxy.done()); got != 2 {
		t.Errorf("the proxy cut %d connections, want 2", got)
	}
}

// An attacker's timing: the object is overwritten while its download is
// cut, before the continuation is sent. The continuation must not splice
// the new object's bytes onto the old one's: the read fails with an error
// matching resume.ErrRefused, and the bytes delivered before it are the
// old object's own.
func TestS3RecipeObjectChangedDuringACut(t *testing.T) {
	w := newS3World(t)
	ctx := context.Background()
	s3c := w.client(t, steady.Options{Policy: retry.Policy{ReplayBytes: 4 << 20}})
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	old, _ := object(2 << 20)
	if err := put(ctx, s3c, "changing", old); err != nil {
		t.Fatal(err)
	}
	replacement := bytes.Repeat([]byte{0xAB}, len(old))
	// The overwrite goes to versitygw straight, past the proxy and its rules.
	direct := s3.New(s3c.Options(), func(o *s3.Options) { o.BaseEndpoint = aws.String("http://" + w.proxy.target) })
	overwritten := make(chan error, 1)
	w.proxy.cut(cutRule{line: "GET /" + bucket + "/changing?", down: 1 << 20, times: 1,
		before: func() { overwritten <- put(ctx, direct, "changing", replacement) }})
	out, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("changing")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err := <-overwritten; err != nil {
		t.Fatalf("overwriting during the cut: %v", err)
	}
	if !errors.Is(err, resume.ErrRefused) {
		t.Fatalf("reading the cut body of a changed object: %d bytes, %v; want an error matching resume.ErrRefused", len(got), err)
	}
	if !bytes.Equal(got, old[:len(got)]) {
		t.Errorf("the %d bytes delivered are not the old object's own", len(got))
	}
}

package resume_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/steadyhttp/steady/resume"
	"github.com/steadyhttp/steady/retry"
)

// cutOnce serves a file with a strong ETag and real Range support, and
// hangs up its first answer after 6 bytes of body.
func cutOnce(etag string) *httptest.Server {
	var n atomic.Int32
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if etag != "" {
			w.Header().Set("Etag", etag)
		}
		body := strings.NewReader("hello, resumable world")
		if n.Add(1) == 1 {
			w.Header().Set("Content-Length", "22")
			io.CopyN(w, body, 6)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection breaks mid-body
		}
		http.ServeContent(w, r, "", time.Time{}, body)
	}))
}

// A body that breaks mid-way is continued inside Read with a Range request,
// because the response's strong ETag proves the rest belongs to it.
func Example() {
	srv := cutOnce(`"v1"`)
	defer srv.Close()
	client := &http.Client{Transport: resume.New(retry.New(nil, retry.Policy{InitialBackoff: time.Millisecond}))}
	ctx, out := retry.WithOutcome(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	fmt.Printf("%q %v, resumes %d, attempts %d\n", body, err, out.Resumes, out.Attempts)
	// Output: "hello, resumable world" <nil>, resumes 1, attempts 2
}

// Without a validator nothing proves a second answer continues the first,
// so the read fails with an Error instead of splicing. (A body this small
// is read inside the attempt and re-sent whole unless PreReadBytes turns
// that off, as here.)
func ExampleError() {
	srv := cutOnce("")
	defer srv.Close()
	client := &http.Client{Transport: resume.New(retry.New(nil, retry.Policy{PreReadBytes: -1}))}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	var re *resume.Error
	fmt.Printf("%q %v %v\n", body, errors.Is(err, resume.ErrRefused), errors.As(err, &re) && re.Offset == 6)
	// Output: "hello," true true
}

// Off leaves a broken body broken, with net/http's own error.
func ExampleOff() {
	srv := cutOnce(`"v1"`)
	defer srv.Close()
	client := &http.Client{Transport: resume.New(retry.New(nil, retry.Policy{}))}
	req, _ := http.NewRequestWithContext(resume.Off(context.Background()), http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	fmt.Println(errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, resume.ErrRefused))
	// Output: true false
}

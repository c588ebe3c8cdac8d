package steady

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"

	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/liveness"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/retry"
)

// Do sends req through the whole stack. A response with a status below 400
// is returned for the caller to read and close. Any other final status is
// returned as an error, its body read (bounded) and closed: a
// [*RateLimitError] for 429 or a wait the server asked for beyond the cap,
// a [*TooLargeError] for 413 and 414, else a [*StatusError]; each says how
// many attempts were made and why retrying stopped. Failures without a
// response are the retry layer's [*retry.Error] or the context's error.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	// The caller's own Outcome, when it asked for one, is the one filled:
	// a body's resumes are counted there while it is read.
	if out := retry.OutcomeFrom(req.Context()); out != nil {
		return c.do(req, out)
	}
	// The copy WithContext makes does not take the User-Agent too, though
	// the user-agent layer then makes a second: http.Client clones a
	// non-empty header for its redirects, which costs more than that copy.
	ctx, out := retry.WithOutcome(req.Context())
	return c.do(req.WithContext(ctx), out)
}

// do is Do for a request whose context already records into out.
func (c *Client) do(req *http.Request, out *retry.Outcome) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.red.With(c.secrets(req.URL)...).Error(unwrapURLError(err))
	}
	if resp.StatusCode >= 400 {
		return nil, statusError(resp, out, c.red.With(c.secrets(req.URL, resp.Request.URL)...))
	}
	return resp, nil
}

// unwrapURLError removes net/http's *url.Error, whose text quotes the whole
// URL with its query; the retry layer's own errors carry a redacted URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Err != nil {
			var re *retry.Error
			if errors.As(ue.Err, &re) || errors.Is(ue.Err, context.Canceled) || errors.Is(ue.Err, context.DeadlineExceeded) {
				return ue.Err
			}
		}
		return &requestError{op: ue.Op, url: credentials.RedactURLString(ue.URL), err: ue.Err}
	}
	return err
}

type requestError struct {
	op, url string
	err     error
}

func (e *requestError) Error() string { return e.op + " " + e.url + ": " + e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

// secrets are the values no text of steady's may carry beyond the keys
// (c.red): the password of a URL's userinfo with the Basic credentials made
// from it (a server that echoes the Authorization header echoes those).
func (c *Client) secrets(urls ...*url.URL) []string {
	var s []string
	for _, u := range urls {
		if u == nil || u.User == nil {
			continue
		}
		if p, ok := u.User.Password(); ok && p != "" {
			basic := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + p))
			s = append(s, basic, p)
		}
	}
	return s
}

// DecodeError is a response body that is not the JSON the caller expected.
type DecodeError struct {
	URL    string // redacted
	Offset int64  // byte offset where decoding failed, when known
	Err    error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("decoding JSON from %s at byte %d: %v", e.URL, e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// GetJSON fetches path (relative to Options.BaseURL, or absolute) with query
// and decodes the JSON body into v. Query names that look like credentials
// are refused: configure a [credentials.Key] instead.
func (c *Client) GetJSON(ctx context.Context, path string, query url.Values, v any) error {
	// The body is read inside each attempt, bounded, so one cut short is
	// re-sent and one that never ends (or inflates without end) is refused.
	out := retry.OutcomeFrom(ctx) // the caller's own, when it asked for one
	ctx = liveness.WithBodyInAttempt(ctx, c.opt.MaxBodyBytes)
	if out == nil {
		ctx, out = retry.WithOutcome(ctx)
	}
	req, err := c.newRequest(ctx, http.MethodGet, path, query)
	if err != nil {
		return err
	}
	resp, err := c.do(req, out)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if offset, err := decodeJSON(resp.Body, v); err != nil {
		return &DecodeError{URL: c.red.URL(resp.Request.URL), Offset: offset, Err: err}
	}
	return nil
}

// decodeJSON decodes the one JSON value of body into v, and on failure says
// at which byte. A body the retry layer holds in memory is decoded where it
// lies, without the copy a json.Decoder makes; anything after the value but
// white space is an error, since a body that is one document and more is
// not the document the caller asked for.
func decodeJSON(body io.Reader, v any) (offset int64, err error) {
	if b, ok := body.(interface{ Bytes() []byte }); ok {
		data := b.Bytes()
		if len(bytes.TrimSpace(data)) == 0 {
			return 0, errEmptyBody
		}
		if err := json.Unmarshal(data, v); err != nil {
			return errorOffset(err), err
		}
		return 0, nil
	}
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		offset := dec.InputOffset()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			offset = se.Offset
		}
		if errors.Is(err, io.EOF) {
			err = errEmptyBody
		}
		return offset, err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("more than one JSON value in the body")
		}
		return dec.InputOffset(), err
	}
	return 0, nil
}

var errEmptyBody = errors.New("empty body")

// errorOffset is the byte at which json.Unmarshal failed, when it says.
func errorOffset(err error) int64 {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se.Offset
	case errors.As(err, &te):
		return te.Offset
	}
	return 0
}

// Walk returns a page walk from path (relative to Options.BaseURL, or
// absolute) with query, through the whole stack. The client's reporter
// receives the page events unless opt names another.
func (c *Client) Walk(path string, query url.Values, opt paginate.Options) (*paginate.Walk, error) {
	req, err := c.newRequest(context.Background(), http.MethodGet, path, query)
	if err != nil {
		return nil, err
	}
	if opt.Reporter == nil {
		opt.Reporter = c.opt.Reporter
	}
	opt.Reporter = redactReporter(opt.Reporter, c.red)
	if opt.MaxPageBytes == 0 {
		opt.MaxPageBytes = c.opt.MaxBodyBytes
	}
	if e, ok := c.opt.Policy.Pacer.(paginate.Estimator); ok && opt.Estimator == nil {
		opt.Estimator = e // the quotas the client paces by tell the walk's ETA
	}
	opt.Secrets = append(append(opt.Secrets, keyValues(c.opt.Keys)...), c.secrets(req.URL)...)
	return paginate.NewWalk(c.http, req, opt), nil
}

// Pages walks the pages from path, as [Client.Walk]; a bad path or query is
// the walk's first and only error.
func (c *Client) Pages(ctx context.Context, path string, query url.Values, opt paginate.Options) iter.Seq2[*paginate.Page, error] {
	w, err := c.Walk(path, query, opt)
	if err != nil {
		return func(yield func(*paginate.Page, error) bool) { yield(nil, err) }
	}
	return w.All(ctx)
}

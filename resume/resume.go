package resume

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// state is what a body knows about continuing itself.
type state struct {
	validator string // the If-Range value; "" when the body cannot be resumed
	why       string // why it cannot, for a refusal; "" when resuming does not apply
	etag      string // the strong ETag, when that is the validator
	encoding  string // the first answer's Content-Encoding
	acceptEnc string // the Accept-Encoding continuations send
	base      int64  // where the body starts in the resource: a caller's own "bytes=N-" answered 206
	total     int64  // the body's length as the answers agree on it, -1 unknown
	piece     int64  // the offset the current answer's new bytes began at
	resumes   int
}

// seamBytes is how many delivered bytes a continuation repeats.
const seamBytes = 16

// atOnceBytes is how many new bytes an answer must have delivered before it
// broke for its continuation to be sent without a backoff (ADR 220): a
// break after that much progress is a lost connection, not a sign of a
// server that needs relief, and one request per MiB costs it little.
const atOnceBytes = 1 << 20

// A continuation makes progress when it delivers at least minProgress new
// bytes and a hundredth of the body, up to maxProgress (ADR 290); a break
// before that spends one of the policy's attempts, as a failed attempt
// does, so a server that sends a byte per connection gets MaxAttempts
// requests, not one per byte.
const (
	minProgress = 16 << 10
	maxProgress = atOnceBytes
)

// progressBytes is how many new bytes an answer must deliver before a
// break for the attempts to count from zero again.
func (r *state) progressBytes() int64 {
	return max(minProgress, min(r.total/100, maxProgress))
}

func (r *state) possible() bool { return r.validator != "" || r.why != "" }

// resumable decides, as resp is handed over, whether its body may be
// continued and with which validator. Resuming applies to a plain GET
// answered 200, on unless [Off]; within that, a body without a strong
// validator, or one net/http decompressed, gets a reason to refuse instead.
func resumable(req *http.Request, resp *http.Response) state {
	st := state{total: resp.ContentLength}
	if st.total < 0 {
		st.total = -1
	}
	if req.Method != "" && req.Method != http.MethodGet {
		return st
	}
	switch rg := req.Header.Get("Range"); {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusPartialContent && rg != "":
		// The caller's own continuation ("bytes=N-", as steady get sends)
		// resumes too, when its answer is the rest of the resource.
		n, ok := openRange(rg)
		first, last, total, crOK := ParseContentRange(resp.Header.Get("Content-Range"))
		if !ok || !crOK || first != n || total < 0 || last != total-1 {
			return st
		}
		st.base, st.total = n, total-n
	default:
		return st
	}
	if off, _ := req.Context().Value(offKey{}).(bool); off {
		return st
	}
	if resp.Uncompressed {
		st.why = "net/http decompressed the body in transit, and a range counts bytes of the encoded body " +
			"(send Accept-Encoding yourself, identity for a download, to make it resumable)"
		return st
	}
	st.encoding = resp.Header.Get("Content-Encoding")
	st.acceptEnc = req.Header.Get("Accept-Encoding")
	if st.acceptEnc == "" {
		// The first answer came unencoded without being asked; a
		// continuation must not be offered gzip, which net/http would
		// decompress and so shift every offset.
		st.acceptEnc = "identity"
	}
	etag := resp.Header.Get("Etag")
	if etag == "" && st.base > 0 && strongETag(req.Header.Get("If-Range")) {
		etag = req.Header.Get("If-Range") // the 206 was sent because the caller's ETag still holds
	}
	if strongETag(etag) {
		st.validator, st.etag = etag, etag
		return st
	}
	st.validator, st.why = lastModified(resp.Header, etag)
	return st
}

// lastModified is the validator a response without a strong ETag offers,
// or why there is none.
func lastModified(h http.Header, etag string) (validator, why string) {
	if lm := h.Get("Last-Modified"); lm != "" {
		mod, err := http.ParseTime(lm)
		if err != nil {
			return "", "Last-Modified " + strconv.Quote(lm) + " is not an HTTP date"
		}
		// A date is a strong validator only when the body was last changed
		// at least a second before it was sent (RFC 9110, 8.8.2.2).
		if date, err := http.ParseTime(h.Get("Date")); err == nil && date.Sub(mod) < time.Second {
			return "", "Last-Modified is within a second of Date, too recent to prove the body unchanged"
		}
		return lm, ""
	}
	switch {
	case etag == "":
		return "", "the response has no ETag or Last-Modified to prove a continuation is the same body"
	case strings.HasPrefix(etag, "W/"):
		return "", "the response has only a weak ETag, which cannot guard a byte range"
	default:
		return "", "the ETag " + strconv.Quote(etag) + " is malformed"
	}
}

// strongETag reports whether v is a strong entity tag: a quoted string of
// RFC 9110 etagc characters.
func strongETag(v string) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		if c := v[i]; c == '"' || c < 0x21 || c == 0x7f {
			return false
		}
	}
	return true
}

// check decides whether resp, asked from byte from, continues the body
// broken at byte k: done when a 416 says the body ended exactly there, why
// when it cannot be trusted. retryStatus is the policy's rule: such a status
// is one retrying ended on, not a refusal.
func (st *state) check(resp *http.Response, k, from int64, retryStatus func(int) bool) (done bool, why string) {
	cr := resp.Header.Get("Content-Range")
	switch code := resp.StatusCode; {
	case code == http.StatusPartialContent:
	case code == http.StatusRequestedRangeNotSatisfiable:
		_, _, total, ok := ParseContentRange(cr)
		if ok && total == st.base+k && (st.total < 0 || st.total == k) {
			return true, ""
		}
		return false, fmt.Sprintf("416 with Content-Range %s, but the body was broken at byte %d", strconv.Quote(cr), k)
	case code == http.StatusOK:
		return false, "the server answered 200 with the whole body: it changed since the first answer, or ignores Range"
	case retryStatus(code):
		return false, ""
	default:
		return false, "the server answered " + strconv.Itoa(code) + " to the Range request"
	}
	first, last, total, ok := ParseContentRange(cr)
	switch {
	case !ok || first < 0:
		return false, "206 with Content-Range " + strconv.Quote(cr) + ", not one byte range with its total"
	case first != st.base+from:
		return false, fmt.Sprintf("206 with Content-Range %s, which does not start at byte %d", strconv.Quote(cr), st.base+from)
	case total < 0:
		return false, "206 with Content-Range " + strconv.Quote(cr) + ", which does not say the total length"
	case st.total >= 0 && total != st.base+st.total:
		return false, fmt.Sprintf("206 with Content-Range %s, but the first answer was %d bytes long", strconv.Quote(cr), st.base+st.total)
	case last >= total:
		return false, "206 with Content-Range " + strconv.Quote(cr) + ", which ends past its own total"
	case resp.ContentLength >= 0 && resp.ContentLength != last-first+1:
		return false, fmt.Sprintf("206 with Content-Length %d, which contradicts its Content-Range %s", resp.ContentLength, strconv.Quote(cr))
	case resp.Uncompressed || resp.Header.Get("Content-Encoding") != st.encoding:
		return false, "206 with a Content-Encoding other than the first answer's"
	}
	if et := resp.Header.Get("Etag"); st.etag != "" && et != "" && et != st.etag {
		return false, fmt.Sprintf("206 with ETag %s, but the first answer had %s", strconv.Quote(et), strconv.Quote(st.etag))
	}
	st.total = total - st.base
	return false, ""
}

package resume_test

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/resume"
	"github.com/steadyhttp/steady/retry"
)

// Whether a body can be continued is decided at its first break (ADR 232),
// but the stall budget its continuations are held to still counts from the
// last byte that arrived, or from the hand-over when none did: the caller's
// own pause before it reads on is silence, as it was when the tracker was
// made at hand-over and marked at every arrival. The first answer stalls
// after cut bytes, every continuation before its first; each stall costs the
// 2s read timeout and each continuation waits 0.5s, and a re-send must fit
// in the 6s budget.
func TestResumeStallBudgetCountsFromTheLastByte(t *testing.T) {
	for _, c := range []struct {
		name          string
		cut           int64         // bytes the first answer sends; 0: none at all
		before, after time.Duration // the caller's pauses before and after reading them
		// attempts: the first answer and the continuations the budget
		// allowed. resumes: a continuation from byte 0 repeats no seam, so
		// its answer is accepted before its body stalls.
		attempts, resumes int
	}{
		// 4s + 2s + 0.5s + 2s of silence since the last byte: no re-send.
		// Counted from the read that broke, a second continuation would go.
		{"a pause after the last byte is silence", 40_000, 0, 4 * time.Second, 2, 0},
		// 2s + 0.5s + 2s since the last byte, 3s more since the hand-over:
		// a second continuation goes.
		{"a pause before the bytes arrived is not", 40_000, 3 * time.Second, 0, 3, 0},
		// No byte: 4s + 2s + 0.5s + 2s since the hand-over.
		{"without a byte the hand-over counts", 0, 4 * time.Second, 0, 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newFileServer(100_000, "Etag", `"v1"`)
				s.cut, s.stall = c.cut, true
				s.answer = func(n int, r *http.Request, resp *http.Response) *http.Response {
					if n > 0 || c.cut == 0 {
						resp.Body = stallBody{resp.Body.(*cutBody)} // not a byte until closed
					}
					return resp
				}
				p := retry.Policy{ReadTimeout: 2 * time.Second, StallTimeout: 6 * time.Second, MaxAttempts: 10,
					InitialBackoff: time.Second, MaxBackoff: time.Second, Rand: constRand(0.5)}
				ctx, out := retry.WithOutcome(t.Context())
				resp, err := newTransport(s, p).RoundTrip(get(ctx, api))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				time.Sleep(c.before)
				if _, err := io.ReadFull(resp.Body, make([]byte, c.cut)); err != nil {
					t.Fatalf("reading the %d bytes sent: %v", c.cut, err)
				}
				time.Sleep(c.after)
				got, err := io.ReadAll(resp.Body)
				if !errors.Is(err, retry.ErrStalled) || len(got) != 0 {
					t.Fatalf("read %d bytes more, ended with %v; want none, ErrStalled", len(got), err)
				}
				if out.Attempts != c.attempts || out.Resumes != c.resumes {
					t.Errorf("attempts %d, resumes %d; want %d, %d", out.Attempts, out.Resumes, c.attempts, c.resumes)
				}
			})
		})
	}
}

// Without a read timeout nothing else wraps a body, so whether it can be
// continued is decided at hand-over: one that can is wrapped and continued,
// one that cannot is handed back as the transport below made it.
func TestResumeWithoutReadTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := retry.Policy{ReadTimeout: -1, Rand: constRand(0.5)}
		s := newFileServer(100_000, "Etag", `"v1"`)
		s.cut = 40_000
		ctx, out := retry.WithOutcome(t.Context())
		got, err := readAll(t, newTransport(s, p), ctx)
		if err != nil || sum(got) != sum(s.data) {
			t.Fatalf("read %d bytes, %v; want all %d", len(got), err, len(s.data))
		}
		if out.Resumes != 2 {
			t.Errorf("resumes %d; want 2", out.Resumes)
		}

		resp, err := newTransport(newFileServer(1000, "Etag", `"v1"`), p).RoundTrip(get(resume.Off(t.Context()), api))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, ok := resp.Body.(*cutBody); !ok {
			t.Errorf("body is a %T; want the transport's own, unwrapped", resp.Body)
		}
	})
}

// Package resume is the body layer: an [http.RoundTripper] above a
// [retry.Transport] that hands the caller bodies bounded in silence and
// continues a broken one where it broke.
//
// Every body [Transport] hands back has each read bounded by the request's
// [retry.Policy.ReadTimeout] ([liveness.BoundReads]): a read that waits
// longer fails with a [*liveness.ReadTimeoutError] instead of blocking until
// the process is killed, and a slow body that keeps sending is never cut.
// Bytes the caller reads are progress for a [liveness.Tracker] shared
// through the request's context.
//
// A GET answered 200 (or the caller's own "bytes=N-" answered 206 with the
// rest) whose body breaks mid-way (a reset, an unexpected EOF, the read
// timeout) is continued inside Read with a Range request from the byte
// reached, guarded by If-Range with the response's strong validator: a
// strong ETag, or a Last-Modified at least a second before the response's
// Date. The continuation asks again for the last 16 bytes already received
// and compares them, and only a 206 whose Content-Range, length, encoding
// and ETag prove it continues the same body is read on. Anything else fails
// the read with an [*Error] ([ErrRefused]) rather than splice two answers.
// A body net/http decompressed is refused too, since a range counts the
// encoded bytes: send Accept-Encoding yourself (identity for a download).
// [Off] turns continuation off for one request.
//
// Each continuation is sent through [retry.Transport.Resend], so it is a
// re-send under the retry policy: MaxAttempts counts the attempts since an
// answer last made progress (16 KiB of new bytes and a hundredth of the
// body, up to 1 MiB: ADR 290), so a server that sends a byte per
// connection ends the read after MaxAttempts requests; the stall budget measures the silence since the last byte,
// the backoff, the deadline rule, the retry budget, pacing and the gate all
// apply. The first continuation after a break that followed at least 1 MiB
// of new bytes is sent without a backoff (ADR 220). [retry.Outcome.Resumes]
// counts the continuations in the caller's Outcome, whose other fields are
// kept up to date as the body is read. Closing the body ends a continuation
// in flight.
//
// A request body without GetBody is made replayable on its way down, on a
// copy of the request: a body that is an [io.Seeker] (an *os.File, a
// *bytes.Reader, any io.ReadSeeker) is rewound to where it stood; any other
// is kept as it is sent, at most [retry.Policy.ReplayBytes] (1 MiB) per
// request and 16 MiB over every request of the Transport at once. A body
// past either bound is committed: it is sent once, and a re-send fails with
// [ErrCommitted], naming the bound.
package resume

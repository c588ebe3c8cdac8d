package liveness

import (
	"io"
	"time"
)

// ReadTimeoutError is the failure of a body read that waited longer than its
// bound for data (see [BoundReads]). It is a timeout in the [net.Error]
// sense, so a retrying transport re-sends, or a body layer continues, as
// after any other timeout.
type ReadTimeoutError struct {
	After time.Duration
}

func (e *ReadTimeoutError) Error() string {
	return "no body data for " + e.After.String() + " (read timeout)"
}

// Timeout reports true: it is a timeout in the [net.Error] sense.
func (e *ReadTimeoutError) Timeout() bool { return true }

// Temporary reports true, for [net.Error].
func (e *ReadTimeoutError) Temporary() bool { return true }

// BoundReads returns body with the silence of each Read bounded by idle: a
// Read that waits longer for data has body closed under it, which makes
// every net/http body fail the blocked Read at once, and fails with a
// [*ReadTimeoutError]. Closing the result closes body. With idle <= 0 body
// is returned as it is.
//
// The first Read makes the body's timer, in the reading goroutine, so reads
// are timed on that goroutine's clock (a testing/synctest bubble's or the
// real one); each Read resets it and stops it when it returns, so nothing
// runs between reads. A body below must let Close unblock a Read, as every
// net/http transport's does.
func BoundReads(body io.ReadCloser, idle time.Duration) io.ReadCloser {
	if idle <= 0 {
		return body
	}
	return &boundedBody{body: body, idle: idle}
}

type boundedBody struct {
	body  io.ReadCloser
	idle  time.Duration
	timer *time.Timer // closes body when a Read waits idle; nil before the first Read
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.timer == nil {
		b.timer = time.AfterFunc(b.idle, func() { b.body.Close() })
	} else {
		b.timer.Reset(b.idle)
	}
	n, err := b.body.Read(p)
	if !b.timer.Stop() {
		// The timer fired: the Read waited idle and its body was closed.
		return n, &ReadTimeoutError{After: b.idle}
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.body.Close() }

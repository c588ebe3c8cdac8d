package liveness

import (
	"context"
	"errors"
	"fmt"
)

// ErrBodyTooLarge is the cause when a body read inside an attempt exceeds the
// limit set with [WithBodyInAttempt]. A later attempt cannot survive it, so it
// is never re-sent.
var ErrBodyTooLarge = errors.New("response body exceeds the limit")

// BodyTooLargeError reports a body that went past its limit.
type BodyTooLargeError struct {
	Limit int64 // bytes allowed
}

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("response body exceeds the limit of %d bytes", e.Limit)
}

// Is reports whether target is [ErrBodyTooLarge].
func (e *BodyTooLargeError) Is(target error) bool { return target == ErrBodyTooLarge }

type bodyKey struct{}

// WithBodyInAttempt asks the retrying transport to read the whole response
// body inside each attempt, at most limit bytes (after any transparent
// decompression), before deciding whether the attempt succeeded. A body that
// fails mid-way is then a failed attempt, re-sent like any other, and the
// response the caller receives has its body already in memory. limit <= 0
// means no limit; prefer a limit for untrusted servers.
func WithBodyInAttempt(ctx context.Context, limit int64) context.Context {
	if limit <= 0 {
		limit = -1
	}
	return context.WithValue(ctx, bodyKey{}, limit)
}

// BodyInAttempt reports whether ctx asks for the body inside the attempt, and
// the limit in bytes (-1: none).
func BodyInAttempt(ctx context.Context) (limit int64, ok bool) {
	limit, ok = ctx.Value(bodyKey{}).(int64)
	return limit, ok
}

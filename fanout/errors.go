package fanout

import (
	"fmt"
	"strings"
)

// ItemError is one item's failure: its index in the item list and the error
// its fetch returned. [Run] returns one for a fatal failure; [*PartialError]
// and [*Interrupted] list them.
type ItemError struct {
	Index int
	Err   error
}

func (e *ItemError) Error() string { return fmt.Sprintf("fanout: item %d: %v", e.Index, e.Err) }

// Unwrap returns the fetch's error.
func (e *ItemError) Unwrap() error { return e.Err }

// PartialError is the error of an [Options.Independent] fan-out in which
// some items failed. The results returned with it hold every success; the
// failed indexes hold the zero value and are listed here.
type PartialError struct {
	// Failed lists each failure, in index order.
	Failed []*ItemError
	// Total is the number of items in the run.
	Total int
}

func (e *PartialError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fanout: %d of %d items failed", len(e.Failed), e.Total)
	writeFirst(&b, e.Failed)
	return b.String()
}

// Unwrap returns the failures, so errors.Is and errors.As see each of them.
func (e *PartialError) Unwrap() []error { return unwrapAll(e.Failed) }

// Indexes returns the indexes of the failed items, in order.
func (e *PartialError) Indexes() []int { return indexes(e.Failed) }

// PanicError is the value [Run] panics with when a fetch panicked: the fan-out
// stops the other items, waits for them, and panics again in the caller's
// goroutine, so the panic is neither swallowed nor lost in a goroutine the
// caller cannot recover. Stack is the stack of the goroutine that panicked.
type PanicError struct {
	Index int
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("fanout: item %d panicked: %v\n\n%s", e.Index, e.Value, e.Stack)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

func writeFirst(b *strings.Builder, failed []*ItemError) {
	if len(failed) == 0 {
		return
	}
	fmt.Fprintf(b, " (first: item %d: %v", failed[0].Index, failed[0].Err)
	if len(failed) > 1 {
		fmt.Fprintf(b, "; %d more", len(failed)-1)
	}
	b.WriteByte(')')
}

func unwrapAll(failed []*ItemError) []error {
	errs := make([]error, len(failed))
	for i, f := range failed {
		errs[i] = f
	}
	return errs
}

func indexes(failed []*ItemError) []int {
	ix := make([]int, len(failed))
	for i, f := range failed {
		ix[i] = f.Index
	}
	return ix
}

package render

import (
	"time"

	"github.com/steadyhttp/steady/event"
)

// noticeKey groups lines that crowd each other out: one kind for one host.
// Thirty-two sub-requests hitting one 429 storm make one story, not
// thirty-two lines; a second host's trouble is a different story.
type noticeKey struct {
	kind event.Kind
	host string
}

// notices limits lines of one key to one per interval and counts the ones
// held back. Not safe for concurrent use.
type notices struct {
	every time.Duration // negative: no limit
	last  map[noticeKey]time.Time
	held  map[noticeKey]int
}

func newNotices(every time.Duration) notices {
	return notices{every: every, last: make(map[noticeKey]time.Time), held: make(map[noticeKey]int)}
}

// admit reports whether a line for k may be printed at t, and how many lines
// for k were held back since the last one printed.
func (n *notices) admit(k noticeKey, t time.Time) (ok bool, held int) {
	if n.every < 0 {
		return true, 0
	}
	if last, seen := n.last[k]; seen && t.Sub(last) < n.every {
		n.held[k]++
		return false, 0
	}
	n.last[k] = t
	held = n.held[k]
	delete(n.held, k)
	return true, held
}

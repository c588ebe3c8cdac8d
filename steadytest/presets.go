package steadytest

import (
	"fmt"
	"strings"
	"time"
)

// Mild returns a light mix of the faults a healthy public API still shows:
// about one request in sixteen fails with a 429 (Retry-After 1s), a 503 or
// 502, or a reset connection; and a quota of 50 requests per 2 seconds. A
// retrying client should never notice more than a short delay.
func Mild(seed uint64) Faults {
	return Faults{
		Seed: seed,
		Mix: []Chance{
			{0.02, Fault{Kind: Status, Status: 429, RetryAfter: time.Second}},
			{0.02, Fault{Kind: Status, Status: 503}},
			{0.01, Fault{Kind: Status, Status: 502}},
			{0.01, Fault{Kind: Reset}},
		},
		Quota: Quota{Limit: 50, Window: 2 * time.Second},
	}
}

// Harsh returns the mix steady demo harvests through: about one request in
// four fails, each way a few percent of the time. 429s and 503s name short
// waits (Retry-After 1s, as seconds or as an HTTP-date); 502 and 504 come
// as HTML; connections reset before the headers and mid-body; bodies are
// truncated; a few responses stall mid-body or hang before the headers for
// 1s, and some drip slowly. The quota is that of [Mild].
//
// Every wait is short so that 100,000 rows at 1,000 a page come through a
// retrying client in well under a minute. A client whose own timeouts are
// shorter than a stall or hang gives up first, which is the point.
func Harsh(seed uint64) Faults {
	return Faults{
		Seed: seed,
		Mix: []Chance{
			{0.03, Fault{Kind: Status, Status: 429, RetryAfter: time.Second}},
			{0.03, Fault{Kind: Status, Status: 503}},
			{0.02, Fault{Kind: Status, Status: 503, RetryAfter: time.Second, RetryAfterDate: true}},
			{0.03, Fault{Kind: Status, Status: 502}},
			{0.02, Fault{Kind: Status, Status: 504}},
			{0.03, Fault{Kind: Reset}},
			{0.02, Fault{Kind: ResetMidBody}},
			{0.03, Fault{Kind: Truncate}},
			{0.02, Fault{Kind: Stall, For: time.Second}},
			{0.01, Fault{Kind: Hang, For: time.Second}},
			{0.02, Fault{Kind: Drip, Chunk: 4096, Every: 10 * time.Millisecond}},
		},
		Quota: Quota{Limit: 50, Window: 2 * time.Second},
	}
}

// Preset returns the fault mix named by name: "none" (no faults, no quota),
// "mild" ([Mild]) or "harsh" ([Harsh]).
func Preset(name string, seed uint64) (Faults, error) {
	switch strings.ToLower(name) {
	case "none":
		return Faults{Seed: seed}, nil
	case "mild":
		return Mild(seed), nil
	case "harsh":
		return Harsh(seed), nil
	}
	return Faults{}, &OptionsError{Field: "Faults", Reason: fmt.Sprintf("unknown preset %q (want none, mild or harsh)", name)}
}

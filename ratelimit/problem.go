package ratelimit

import (
	"encoding/json"
	"mime"
	"net/http"
	"time"
)

// The problem types of the httpapi draft (ADR 0324), in the "type" member
// of an application/problem+json body.
const (
	// ProblemQuotaExceeded says the request exceeded one or more quota
	// policies, named in the "violated-policies" member.
	ProblemQuotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	// ProblemReducedCapacity says the server serves fewer requests than
	// its policies announce, for a while.
	ProblemReducedCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
)

// MaxProblemBody bounds the body [ParseProblem] reads; a longer one is no
// problem it reads.
const MaxProblemBody = 64 << 10

// Problem is what a rate-limit problem body said.
type Problem struct {
	Type string // ProblemQuotaExceeded or ProblemReducedCapacity
	// Violated names the policies exceeded ("violated-policies").
	Violated []string
}

// ParseProblem reads a response's problem body: the caller passes the
// response's header, for its Content-Type, and up to [MaxProblemBody]
// bytes of its body. ok is false unless the body is application/problem+json
// of one of the draft's rate-limit types.
func ParseProblem(h http.Header, body []byte) (p Problem, ok bool) {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != "application/problem+json" || len(body) > MaxProblemBody {
		return Problem{}, false
	}
	var doc struct {
		Type     string   `json:"type"`
		Violated []string `json:"violated-policies"`
	}
	if json.Unmarshal(body, &doc) != nil || (doc.Type != ProblemQuotaExceeded && doc.Type != ProblemReducedCapacity) {
		return Problem{}, false
	}
	if len(doc.Violated) > maxRoutes {
		doc.Violated = doc.Violated[:maxRoutes]
	}
	return Problem{Type: doc.Type, Violated: doc.Violated}, true
}

// Spend returns windows, the quotas the response's fields announced
// ([Windows]), as the problem says they stand, for a [Limiter] to observe:
// under quota-exceeded each violated window is spent (until its own reset,
// or retryAfter when it gave none), and a window of the whole host spent
// for retryAfter when no announced window is named; under
// temporary-reduced-capacity the whole host is spent for retryAfter. A
// problem that says no reset (retryAfter 0 and none of its own) changes
// nothing: the pacer cannot tell how long to hold.
func (p Problem) Spend(windows []Quota, retryAfter time.Duration) []Quota {
	out := append([]Quota(nil), windows...)
	named := false
	if p.Type == ProblemQuotaExceeded {
		for i := range out {
			for _, v := range p.Violated {
				if out[i].Name == v {
					out[i].Remaining, named = 0, true
					if out[i].Reset <= 0 {
						out[i].Reset = retryAfter
					}
				}
			}
		}
	}
	if !named && retryAfter > 0 && retryAfter <= MaxPeriod {
		host := Quota{Remaining: 0, Reset: retryAfter}
		for i := range out {
			if out[i].Name == "" {
				out[i] = host
				return out
			}
		}
		out = append(out, host)
	}
	return out
}

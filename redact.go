package steady

import (
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/progress"
)

// redactReporter returns next behind the client's redactor: every text of
// every event, whichever layer sent it, has the client's secrets replaced
// and server-supplied control characters escaped before a renderer or a
// logger sees it. The layers already redact URLs by parameter name; this is
// the check by value, done once for all of them. A nil next stays nil.
func redactReporter(next progress.Reporter, red *credentials.Redactor) progress.Reporter {
	if next == nil {
		return nil
	}
	if r, ok := next.(*redacting); ok && r.red == red {
		return r
	}
	return &redacting{next: next, red: red}
}

type redacting struct {
	next progress.Reporter
	red  *credentials.Redactor
}

func (r *redacting) Report(e progress.Event) {
	e.URL = r.red.Text(e.URL)
	e.Host = r.red.Text(e.Host)
	e.Method = r.red.Text(e.Method)
	e.Err = r.red.Text(e.Err)
	e.Reason = r.red.Text(e.Reason)
	e.ErrClass = r.red.Text(e.ErrClass)
	r.next.Report(e)
}

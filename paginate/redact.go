package paginate

import "github.com/steadyhttp/steady/credentials"

// walkError hides secrets ([Options.Secrets], through the one redactor of
// [credentials.Redactor]) and escapes control characters in an error a
// walk is about to yield: every field of an [*Error] that holds server text
// or a URL, and its cause.
func walkError(r *credentials.Redactor, err error) error {
	e, ok := err.(*Error)
	if !ok {
		return r.Error(err)
	}
	e.URL = r.Text(e.URL)
	e.Link = r.Text(e.Link)
	e.Host = r.Text(e.Host)
	e.Excerpt = r.Text(e.Excerpt)
	e.Detail = r.Text(e.Detail)
	e.Err = r.Error(e.Err)
	return e
}

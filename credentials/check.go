package credentials

import (
	"net/url"
	"slices"
	"strconv"
)

// A CredentialParamError refuses a free-form query parameter whose name looks
// like it carries a secret ([IsCredentialName]). Such a value would go to
// whatever host the URL names, on every redirect and next-page link; a [Key]
// sends it only where it belongs. The error names the parameter, never its
// value.
type CredentialParamError struct {
	Name string
}

func (e *CredentialParamError) Error() string {
	return "credentials: refusing query parameter " + strconv.Quote(e.Name) +
		": it looks like a credential; configure a credentials.Key with Query " +
		strconv.Quote(e.Name) + " and the hosts that accept it instead"
}

// CheckName returns a [*CredentialParamError] if name looks like a credential,
// and nil otherwise. APIs that pass caller-supplied query parameters through
// call it (or [CheckQuery]) before building a URL.
func CheckName(name string) error {
	if IsCredentialName(name) {
		return &CredentialParamError{Name: name}
	}
	return nil
}

// CheckQuery returns a [*CredentialParamError] for the first name of q, in
// sorted order, that looks like a credential, and nil if there is none.
func CheckQuery(q url.Values) error {
	var bad []string
	for name := range q {
		if IsCredentialName(name) {
			bad = append(bad, name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &CredentialParamError{Name: slices.Min(bad)}
}

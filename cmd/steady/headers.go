package main

import (
	"net/http"
	"net/url"
	"strings"
)

// negotiation are the -H headers that follow a redirect to another origin
// (ADR 307): they say what the caller wants back and carry no secret. Every
// other header given with -H is scoped to the URL's origin, as curl scopes
// Authorization and Cookie: a name off every list (X-RapidAPI-Key,
// X-Vault-Token, Dd-Api-Key, ...) may be a secret as well as any.
var negotiation = []string{
	"Accept",
	"Accept-Encoding", // steady sends identity itself; a value here names codings only
	"Accept-Language",
	"Cache-Control",
	"If-Modified-Since",
	"If-None-Match",
	"User-Agent",
}

func isNegotiation(name string) bool {
	for _, n := range negotiation {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// scopeHeaders makes hc drop the named headers from every redirect that
// leaves the first request's origin. http.Client copies the first
// request's headers onto each hop before CheckRedirect runs, so a hop
// back to the origin has them again.
func scopeHeaders(hc *http.Client, names []string) {
	if len(names) == 0 {
		return
	}
	inner := hc.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if inner != nil {
			if err := inner(req, via); err != nil {
				return err
			}
		}
		if originOf(req.URL) != originOf(via[0].URL) {
			for _, n := range names {
				req.Header.Del(n)
			}
		}
		return nil
	}
}

// originOf is scheme://host:port, with the scheme's default port.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

package recipes_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// fakeGitHub answers a few REST endpoints as api.github.com does when it
// is under pressure: every answer carries the core quota in x-ratelimit-*
// fields with the reset in whole Unix seconds; a request beyond the quota
// before its reset is refused with GitHub's primary-limit 403; one request
// chosen in advance is refused with GitHub's secondary-limit 403 and a
// Retry-After, and any request before that wait is over is refused again;
// and the bodies of the requests chosen in advance (and, if asked, of
// every answer that spends the quota) are cut mid-way.
// Its clock is time.Now, so inside a synctest bubble it is virtual.
type fakeGitHub struct {
	token     string
	limit     int           // requests per window
	window    time.Duration // from the first request of a window to its reset
	secondary int           // the request answered the secondary-limit 403 (0: none)
	retry     int           // its Retry-After, in seconds
	cut       map[int]bool  // requests whose body is cut mid-way
	cutSpent  bool          // cut too every answer that spends the quota

	mu      sync.Mutex
	reset   time.Time // the current window's reset
	used    int
	until   time.Time // the end of the secondary limit's wait
	arrived []arrival
	foreign []string // the Authorization of each request to another host
}

// An arrival is one request as the fake saw it.
type arrival struct {
	n      int
	at     time.Time
	path   string
	status int
	why    string // "secondary", "primary", "too soon", "cut", "unauthorized" or ""
	reset  time.Time
	left   int // x-ratelimit-remaining as sent
	wait   time.Duration
}

// issuesPerPage and pages shape the repository's issues; each issue has a
// body long enough that a cut lands inside the JSON.
const (
	issuesPerPage = 30
	issuePages    = 4
)

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Host != "api.github.com" {
		// Another host, which a redirect leads to: it needs no token
		// and must get none.
		f.mu.Lock()
		f.foreign = append(f.foreign, r.Header.Get("Authorization"))
		f.mu.Unlock()
		fmt.Fprint(w, `{"id":23096959,"name":"go","full_name":"golang/go"}`)
		return
	}
	f.mu.Lock()
	a := f.admit(r)
	f.mu.Unlock()
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Ratelimit-Limit", strconv.Itoa(f.limit))
	h.Set("X-Ratelimit-Remaining", strconv.Itoa(a.left))
	h.Set("X-Ratelimit-Reset", strconv.FormatInt(a.reset.Unix(), 10))
	h.Set("X-Ratelimit-Used", strconv.Itoa(f.limit-a.left))
	h.Set("X-Ratelimit-Resource", "core")
	switch a.why {
	case "unauthorized":
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`)
		return
	case "secondary", "too soon":
		h.Set("Retry-After", strconv.Itoa(int((a.wait+time.Second-1)/time.Second)))
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",`+
			`"documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits","status":"403"}`)
		return
	case "primary":
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"API rate limit exceeded for user ID 1.",`+
			`"documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits","status":"403"}`)
		return
	}
	body, link, ok := f.resource(r)
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`)
		return
	}
	if body == nil {
		h.Set("Location", link)
		w.WriteHeader(http.StatusFound)
		return
	}
	if link != "" {
		h.Set("Link", link)
	}
	// GitHub's JSON answers carry weak validators, which no Range
	// continuation may rely on.
	h.Set("Etag", fmt.Sprintf(`W/"%x"`, len(body)*7919+a.n))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if a.why != "cut" {
		w.Write(body)
		return
	}
	w.Write(body[:len(body)/2])
	w.(http.Flusher).Flush()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// admit counts the request against the quota and decides its answer.
func (f *fakeGitHub) admit(r *http.Request) arrival {
	now := time.Now()
	if !now.Before(f.reset) {
		f.used = 0
		f.reset = time.Unix(now.Add(f.window).Add(time.Second-1).Unix(), 0)
	}
	a := arrival{n: len(f.arrived) + 1, at: now, path: r.URL.RequestURI(), status: http.StatusOK, reset: f.reset}
	switch {
	case r.Header.Get("Authorization") != "Bearer "+f.token:
		a.why, a.status = "unauthorized", http.StatusUnauthorized
	case now.Before(f.until):
		a.why, a.status, a.wait = "too soon", http.StatusForbidden, f.until.Sub(now)
	case a.n == f.secondary:
		f.until = now.Add(time.Duration(f.retry) * time.Second)
		a.why, a.status, a.wait = "secondary", http.StatusForbidden, f.until.Sub(now)
	case f.used >= f.limit:
		a.why, a.status = "primary", http.StatusForbidden
	default:
		f.used++
		if f.cut[a.n] || f.cutSpent && f.used == f.limit {
			a.why = "cut"
		}
	}
	a.left = f.limit - f.used
	f.arrived = append(f.arrived, a)
	return a
}

// resource is the JSON of the endpoint asked for and its Link field, or
// no JSON and the Location of a redirect to another host.
func (f *fakeGitHub) resource(r *http.Request) (body []byte, link string, ok bool) {
	var v any
	switch r.URL.Path {
	case "/repos/golang/moved":
		return nil, "https://mirror.example.net/repos/golang/go", true
	case "/orgs/golang/repos":
		v = []map[string]any{{"id": 23096959, "name": "go", "full_name": "golang/go"}, {"id": 1, "name": "tools", "full_name": "golang/tools"}}
	case "/repos/golang/go/issues":
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		var issues []map[string]any
		for i := range issuesPerPage {
			n := (page-1)*issuesPerPage + i + 1
			issues = append(issues, map[string]any{"number": n, "title": fmt.Sprintf("issue %d", n),
				"body": strings.Repeat(fmt.Sprintf("the text of issue %d. ", n), 20)})
		}
		v = issues
		if page < issuePages {
			link = fmt.Sprintf(`<https://api.github.com/repositories/23096959/issues?page=%d>; rel="next", `+
				`<https://api.github.com/repositories/23096959/issues?page=%d>; rel="last"`, page+1, issuePages)
		}
	default:
		return nil, "", false
	}
	body, _ = json.Marshal(v)
	return body, link, true
}

// log returns the requests seen so far.
func (f *fakeGitHub) log() []arrival {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]arrival(nil), f.arrived...)
}

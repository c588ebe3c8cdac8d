package paginate_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steadyhttp/steady/event"
	"github.com/steadyhttp/steady/paginate"
	"github.com/steadyhttp/steady/ratelimit"
	"github.com/steadyhttp/steady/retry"
)

// twoWindows is an API behind two fixed windows, each opened by the first
// request after the last one ended, as express-rate-limit keeps them: it
// announces both (RateLimit-Policy and RateLimit, draft 10), answers a
// spent one with 429, and serves rows one a page with X-Total-Count.
type twoWindows struct {
	rows    int
	windows []quotaWindow

	mu      sync.Mutex
	refused int
}

type quotaWindow struct {
	name   string
	limit  int
	period time.Duration
	start  time.Time
	used   int
}

func (s *twoWindows) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	now := time.Now()
	var policy, state []string
	spent := false
	for i := range s.windows {
		q := &s.windows[i]
		if q.start.IsZero() || !now.Before(q.start.Add(q.period)) {
			q.start, q.used = now, 0
		}
		spent = spent || q.used >= q.limit
	}
	for i := range s.windows {
		q := &s.windows[i]
		if !spent {
			q.used++
		}
		reset := (q.start.Add(q.period).Sub(now) + time.Second - 1) / time.Second
		policy = append(policy, fmt.Sprintf("%q;q=%d;w=%d", q.name, q.limit, q.period/time.Second))
		state = append(state, fmt.Sprintf("%q;r=%d;t=%d", q.name, q.limit-q.used, reset))
	}
	if spent {
		s.refused++
	}
	s.mu.Unlock()
	w.Header().Set("RateLimit-Policy", strings.Join(policy, ", "))
	w.Header().Set("RateLimit", strings.Join(state, ", "))
	if spent {
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	if offset+1 < s.rows {
		w.Header().Set("Link", fmt.Sprintf(`</items?offset=%d>; rel="next"`, offset+1))
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(s.rows))
	_ = json.NewEncoder(w).Encode([]map[string]int{{"id": offset + 1}})
}

// A walk paced by two quota windows, 5 a second under 20 every 10
// seconds, in virtual time: no request is refused after the first
// response, and from the first tenth of the walk on, every page's ETA is
// within a tenth of the time the walk really took from there (or within
// the second the reset fields are rounded to, when less is left).
func TestETAFollowsTwoQuotaWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rows = 120
		api := &twoWindows{rows: rows, windows: []quotaWindow{
			{name: "burst", limit: 5, period: time.Second}, {name: "hour", limit: 20, period: 10 * time.Second}}}
		pacer := &ratelimit.Pacer{MaxHold: time.Minute}
		rt := retry.New(&memTransport{h: api, latency: 10 * time.Millisecond}, retry.Policy{Pacer: pacer, MaxRetryAfter: time.Minute})
		req, err := http.NewRequest(http.MethodGet, "http://api.test/items?offset=0", nil)
		if err != nil {
			t.Fatal(err)
		}
		type mark struct {
			at  time.Time
			eta time.Duration
		}
		var marks []mark
		w := paginate.NewWalk(&http.Client{Transport: rt}, req, paginate.Options{Estimator: pacer})
		n := 0
		for _, err := range w.All(t.Context()) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			marks = append(marks, mark{time.Now(), w.Summary().ETA})
		}
		end := time.Now()
		if n != rows || api.refused != 0 {
			t.Fatalf("%d pages, %d refused; want %d and none", n, api.refused, rows)
		}
		if last := w.Summary().ETA; last != 0 {
			t.Errorf("the complete walk's ETA is %v, want 0", last)
		}
		worst := 0.0
		for i, m := range marks[rows/10:] {
			real := end.Sub(m.at)
			off := (m.eta - real).Abs()
			if off > max(real/10, time.Second) {
				t.Errorf("page %d: ETA %v, the walk took %v more", rows/10+i+1, m.eta, real)
			}
			if real > 10*time.Second {
				worst = max(worst, off.Seconds()/real.Seconds())
			}
		}
		t.Logf("%d pages in %v; worst ETA error %.1f%% while more than 10 s were left", rows, end.Sub(marks[0].at), 100*worst)
	})
}

// Without an Estimator the ETA is the pages left at the measured rate;
// the rows an earlier walk received count as done, a row cap bounds what
// is left, and every page's event carries the ETA its summary says.
func TestETAMeasuredWithoutQuotas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rows = 20
		api := &twoWindows{rows: rows} // no windows: nothing held
		tr := &memTransport{h: api, latency: 100 * time.Millisecond}
		var events []time.Duration
		rep := event.ReporterFunc(func(e event.Event) {
			if e.Kind == event.PageReceived {
				events = append(events, e.ETA)
			}
		})
		walk := func(opt paginate.Options) []time.Duration {
			events = nil
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/items?offset=10", nil)
			opt.Reporter = rep
			w := paginate.NewWalk(&http.Client{Transport: tr}, req, opt)
			var got []time.Duration
			for _, err := range w.All(t.Context()) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, w.Summary().ETA)
			}
			return got
		}
		// A resumed walk from row 11: 10 rows before it, 10 pages of a row.
		got := walk(paginate.Options{ItemsBefore: 10})
		want := []time.Duration{900, 800, 700, 600, 500, 400, 300, 200, 100, 0}
		for i := range want {
			want[i] *= time.Millisecond
		}
		if !slices.Equal(got, want) || !slices.Equal(events, want) {
			t.Errorf("ETAs %v, events %v; want %v", got, events, want)
		}
		// Without ItemsBefore the walk believes 10 more rows are left.
		if got := walk(paginate.Options{}); got[0] != 1900*time.Millisecond {
			t.Errorf("first ETA %v without ItemsBefore, want 1.9s", got[0])
		}
		// A cap of 3 rows leaves 2 after the first page.
		if got := walk(paginate.Options{ItemsBefore: 10, MaxRows: 3}); got[0] != 200*time.Millisecond || got[len(got)-1] != 0 {
			t.Errorf("ETAs %v under MaxRows 3, want 200ms first and 0 last", got)
		}
	})
}

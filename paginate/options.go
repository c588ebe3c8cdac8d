package paginate

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/steadyhttp/steady/config"
	"github.com/steadyhttp/steady/credentials"
	"github.com/steadyhttp/steady/event"
)

// NoItems, as [Options.Items], says the pages carry no items the walk should
// find: it neither decodes nor checks the body unless the [Next] strategy
// reads JSON. Use it for pages that are not JSON (with [LinkHeader]) or when
// you decode Page.Body yourself.
const NoItems = "-"

// FindItems, as [Options.Items], finds the items where they are on the
// first page: the page itself when it is an array, else the first of the
// top-level members "features", "items", "data" and "results" that holds
// an array (GeoJSON, OGC API Features and STAC name it "features", other
// APIs one of the others). The path found holds for the rest of the walk;
// [Summary.Detected] says which it was. A first page with none of them is
// [ErrNoItems].
const FindItems = "*"

// itemKeys are the members [FindItems] looks for, in order of preference.
var itemKeys = [...]string{"features", "items", "data", "results"}

// Options configure a walk. The zero value follows RFC 8288 Link headers,
// expects each page to be a top-level JSON array of items, stays on the
// first request's host, and has no caps but a 64 MiB page size.
type Options struct {
	// Next finds the link to the following page: [LinkHeader] (nil),
	// [JSONLinks], [Cursor], [BodyLink], [XMLCursor], or your own [Next];
	// or computes it: [Offset], [PageNumber], [Range]. [ParseStyle] reads
	// any of them from text. Whatever it finds passes the next-link policy
	// ([Policy.Resolve]) before it is fetched.
	Next Next

	// Items is where each page's items are: a dotted path of object keys
	// such as "features", "data" or "result.items" ("" means the page is
	// a top-level array; [NoItems] means there are none to find;
	// [FindItems] finds them on the first page). A key containing a dot
	// cannot be named.
	Items string

	// TotalField is where the first page announces how many items the
	// whole walk has, a dotted path to a JSON number such as "meta.total"
	// ([Summary.Total] reports it). Empty means the X-Total-Count header,
	// else a top-level numberMatched (OGC API Features, STAC).
	TotalField string

	// AllowedHosts are the hosts next links may point at ("host" or
	// "host:port"); empty means the host of the first request.
	AllowedHosts []string
	// CanonicalHost, when set, moves every next link onto this host over
	// https, dropping the link's own host, port and userinfo: for services
	// whose links name an internal host. See [Policy].
	CanonicalHost string

	// MaxPages stops the walk after this many pages (0: no cap).
	MaxPages int
	// MaxRows stops the walk after exactly this many items, trimming the
	// last page's Items (0: no cap). It needs items, so not [NoItems].
	MaxRows int
	// MaxPageBytes bounds each page's body; a larger page fails the walk
	// with [liveness.ErrBodyTooLarge]. 0 means
	// [config.DefaultMaxBodyBytes] (64 MiB), negative means no bound.
	MaxPageBytes int64

	// Concurrency is how many pages a walk of a computed style ([Offset],
	// [PageNumber], [Range]) fetches at once, through the same client, so
	// its pacer and retry budget govern them all. Pages are still yielded
	// in order, and the summary's resume point is the first page not
	// yielded; pages fetched past the last one are dropped unseen. 0 or 1
	// fetches one page at a time, as every other style always does.
	//
	// A [LinkHeader] walk asks for the next page as soon as a page has
	// arrived, while it is checked and handed over, so that work overlaps
	// the next round trip; it still has one request in flight at a time.
	// Concurrency 1 makes it wait until the page is handed over, for a
	// caller that changes something between pages.
	Concurrency int

	// Range is, for a [Range] walk, the Range header of its first request,
	// such as the [Summary.NextRange] of a walk to resume: the walk starts
	// at that item, with that page size. Empty means the request's own
	// Range header, or none. It is an error with any other style, whose
	// position is in the URL.
	Range string

	// Reporter receives a [event.PageReceived] event per page (nil:
	// silent).
	Reporter event.Reporter

	// Estimator, when set, tells how long the pages left take by what it
	// knows of the quotas (a *ratelimit.Pacer is one; the facade gives its
	// policy's Pacer when that is one); nil: the measured rate alone. See [Summary.ETA].
	Estimator Estimator
	// ItemsBefore is how many items of the collection an earlier walk
	// received (a walk resumed from its next page): the ETA counts them as
	// done.
	ItemsBefore int64

	// Secrets are values that must never appear in errors or events, such
	// as API keys; the client fills it in. Wherever the walk puts server
	// text or a URL into an [*Error] (Excerpt, Detail, URL, Link, the
	// cause's text) or an event, each is replaced by
	// [credentials.Redacted]: as written, query- or path-escaped, and
	// inside base64 (the Basic Authorization a server echoes back). Empty
	// strings are ignored. Do not print the Options themselves.
	Secrets credentials.Secrets
}

// plan is the options checked and worked out once per walk.
type plan struct {
	first  *url.URL
	policy Policy
	next   Next
	limit  int64 // -1: none
	// paths[0] is the items path and paths[1] the strategy's JSON path;
	// mask says which are wanted.
	paths [2][]string
	mask  uint8
	// findItems: the items path is found on the first page ([FindItems]).
	// auto: the strategy is chosen on the first page that names a next
	// one ([Auto]); next is nil until then. detected says what was found.
	findItems, auto bool
	detected        Detected
	// redact hides Options.Secrets in errors and events.
	redact *credentials.Redactor
	// total is Options.TotalField split; nil means the defaults.
	total []string
	// client is the walk's client with the policy on its redirects.
	client *http.Client
	// steps is the state of a computed style, nil for the others; xml is
	// the XMLCursor style, nil for the others.
	steps *stepState
	xml   *xmlStyle
	// xmlItems: an XMLCursor walk delivers its items.
	xmlItems bool
}

func (p *plan) wantItems() bool { return p.mask&1 != 0 }
func (p *plan) needJSON() bool  { return p.mask != 0 }

// A jsonPather is a strategy that reads one value of the page's JSON; the
// walk finds it in the same pass that finds the items.
type jsonPather interface {
	jsonPath() []string
}

// A validator is a strategy that can check its own settings.
type validator interface {
	validate() error
}

func newPlan(req *http.Request, opt Options) (*plan, error) {
	if req == nil || req.URL == nil {
		return nil, optionsError("no request to start from")
	}
	if opt.MaxPages < 0 || opt.MaxRows < 0 || opt.Concurrency < 0 {
		return nil, optionsError("MaxPages, MaxRows and Concurrency cannot be negative")
	}
	p := &plan{next: opt.Next, limit: opt.MaxPageBytes, redact: credentials.NewRedactor(opt.Secrets...)}
	if p.next == nil {
		p.next = LinkHeader
	}
	if _, ok := p.next.(autoNext); ok {
		p.auto = true
	}
	if v, ok := p.next.(validator); ok {
		if err := v.validate(); err != nil {
			return nil, err
		}
	}
	if err := p.styleState(opt); err != nil {
		return nil, err
	}
	switch p.limit {
	case 0:
		p.limit = config.DefaultMaxBodyBytes
	default:
		p.limit = max(p.limit, -1)
	}
	if p.xml != nil {
		if opt.Items != "" && opt.Items != NoItems {
			return nil, optionsError("XMLCursor finds its items by its own element path; leave Items empty")
		}
		p.mask, p.xmlItems = 0, opt.Items != NoItems
	} else if opt.Items == FindItems {
		p.findItems, p.mask = true, 1
	} else if opt.Items != NoItems {
		path, err := splitPath(opt.Items, "Items")
		if err != nil {
			return nil, err
		}
		p.paths[0], p.mask = path, 1
	} else if opt.MaxRows > 0 {
		return nil, optionsError("MaxRows counts items, but Items is NoItems")
	}
	if opt.TotalField != "" {
		path, err := splitPath(opt.TotalField, "TotalField")
		if err != nil {
			return nil, err
		}
		p.total = path
	}
	if jp, ok := p.next.(jsonPather); ok {
		p.paths[1] = jp.jsonPath()
		p.mask |= 2
	}
	first := *req.URL
	first.User = nil
	first.Fragment, first.RawFragment = "", ""
	p.first = &first
	if st, ok := p.next.(stepper); ok {
		s, err := newStepState(st, p, startHeader(req.Header, opt.Range))
		if err != nil {
			return nil, err
		}
		s.first = opt.Range
		p.steps = s
	}
	p.policy = Policy{AllowedHosts: opt.AllowedHosts, CanonicalHost: opt.CanonicalHost}
	if len(p.policy.AllowedHosts) == 0 {
		p.policy.AllowedHosts = []string{req.URL.Host}
	}
	return p, nil
}

// styleState notes an XMLCursor style, and refuses what a computed style
// cannot do.
func (p *plan) styleState(opt Options) error {
	if x, ok := p.next.(xmlStyle); ok {
		p.xml = &x
	}
	if _, ok := p.next.(rangeStyle); opt.Range != "" && !ok {
		return optionsError("Range is the first Range header of a Range walk; this walk's style has its position in the URL")
	}
	if _, ok := p.next.(stepper); ok && opt.Items == NoItems {
		return optionsError("a computed style counts items to know where the next page starts, but Items is NoItems")
	}
	return nil
}

// startHeader is the header a computed walk reads its start from: the
// request's own, or one whose Range is rng when that is set.
func startHeader(h http.Header, rng string) http.Header {
	if rng == "" {
		return h
	}
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Range", rng)
	return h
}

// splitPath splits a dotted path; "" is the top level.
func splitPath(path, what string) ([]string, error) {
	if path == "" {
		return []string{}, nil
	}
	segs := strings.Split(path, ".")
	for _, s := range segs {
		if s == "" {
			return nil, optionsError(fmt.Sprintf("%s path %q has an empty key", what, path))
		}
	}
	return segs, nil
}

func optionsError(detail string) error {
	return &Error{Err: ErrOptions, Detail: detail}
}

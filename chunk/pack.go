package chunk

import (
	"fmt"
	"math"
	"net/url"
	"strings"
)

// DefaultMaxURLBytes is the budget used when none is given: under the
// 8 KiB request line that common servers and proxies accept.
const DefaultMaxURLBytes = 8000

// DefaultMaxValues is the cap of values per URL used when none is given:
// Express (through the qs library) keeps the first 1,000 parameters of a
// query and silently drops the rest.
const DefaultMaxValues = 1000

// Options change how [PlanWith] and [PlanMulti] write a list. The zero
// value means: budget [DefaultMaxURLBytes], at most [DefaultMaxValues]
// values per URL, values joined with commas.
type Options struct {
	// MaxURLBytes is the largest length of a planned URL's String();
	// 0 or less means DefaultMaxURLBytes.
	MaxURLBytes int
	// MaxValues is the most values one URL carries, counted over all its
	// list parameters; with Repeat, each of the base URL's own query
	// parameters counts as one too, since a server that caps parameters
	// counts them. 0 means DefaultMaxValues; negative means no cap.
	MaxValues int
	// Separator joins the values of one parameter; "" means ",". It is
	// percent-encoded in the URL unless it is one of , : / @ ! $ ' ( ) *.
	// A value containing it is refused with [ErrContainsSeparator]. A
	// separator that overlaps itself, one whose start is also its end such
	// as "00" or " | ", is refused with [ErrInvalid]: with it, values that
	// do not contain it can still join into a list that splits differently
	// ("a |", "b" joined by " | " reads back as "a", "| b").
	Separator string
	// Repeat writes one parameter per value (?id=a&id=b) instead of a
	// joined list; values may then contain anything. Setting Separator as
	// well is an error.
	Repeat bool
}

// resolve returns the options' budget and separator, with defaults.
func (o Options) resolve() (budget int, sep string, err error) {
	budget, sep = o.MaxURLBytes, o.Separator
	if budget <= 0 {
		budget = DefaultMaxURLBytes
	}
	if o.Repeat && sep != "" {
		return 0, "", fmt.Errorf("chunk: Separator %q given with Repeat: %w", sep, ErrInvalid)
	}
	if sep == "" && !o.Repeat {
		sep = ","
	}
	if overlapsItself(sep) {
		return 0, "", fmt.Errorf("chunk: Separator %q begins the way it ends, so joined values may not split back: %w", sep, ErrInvalid)
	}
	return budget, sep, nil
}

// valueRoom is how many values of lists lists one URL of base query q
// may carry under the options' cap, or an error when that is not one of
// each.
func (o Options) valueRoom(q string, lists int) (int, error) {
	most := o.MaxValues
	switch {
	case most < 0:
		return math.MaxInt, nil
	case most == 0:
		most = DefaultMaxValues
	}
	room := most
	if o.Repeat {
		room -= strings.Count(q, "&") // q is the base query with a trailing "&"
	}
	if room < lists {
		return 0, fmt.Errorf("chunk: MaxValues %d leaves no room for one value of each list beside the base query's parameters: %w", most, ErrInvalid)
	}
	return room, nil
}

// overlapsItself reports whether some proper prefix of sep is also a suffix.
//
// When none is, refusing values that contain sep is enough to make every
// join split back exactly. An occurrence of sep in a joined string that is
// not one of the separators written must overlap one of them, since
// outside the separators there are only values, which do not contain sep.
// Two different occurrences of sep that overlap make the end of one equal
// to the start of the other: a prefix that is also a suffix. A single
// character, or any one UTF-8 encoded rune, never has one.
func overlapsItself(sep string) bool {
	for k := 1; k < len(sep); k++ {
		if sep[:k] == sep[len(sep)-k:] {
			return true
		}
	}
	return false
}

// Plan splits values into the fewest URLs, each base plus param=v1,v2,...
// with the values in input order and each URL's String() at most
// maxURLBytes long (0 or less means [DefaultMaxURLBytes]). It is
// [PlanWith] with only the budget set; see there for the rules.
func Plan(base *url.URL, param string, values []string, maxURLBytes int) ([]*url.URL, error) {
	return PlanWith(base, param, values, Options{MaxURLBytes: maxURLBytes})
}

// PlanWith splits values into the fewest URLs that each fit the budget,
// written as opt says. The URLs are fresh copies of base, whose query is
// kept as written and counts toward the budget; values appear in input
// order, so reading the URLs in order gives back the list exactly.
//
// An empty list gives one URL: base as it is. Errors, all before any URL is
// returned: a nil base or empty param ([ErrInvalid]); base already carrying
// param ([ErrParamPresent]); base too long by itself ([ErrBaseTooLong]); and
// for the first offending value a [*ValueError]: empty, containing the
// separator, or too long to fit a URL even alone.
func PlanWith(base *url.URL, param string, values []string, opt Options) ([]*url.URL, error) {
	budget, sep, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	if base == nil || param == "" {
		return nil, fmt.Errorf("chunk: a base URL and a parameter name are required: %w", ErrInvalid)
	}
	q, err := baseQuery(base, []string{param})
	if err != nil {
		return nil, err
	}
	if err := baseFits(base, budget); err != nil {
		return nil, err
	}
	if len(values) == 0 {
		u := *base
		return []*url.URL{&u}, nil
	}
	l, err := newList(param, values, sep, opt.Repeat)
	if err != nil {
		return nil, err
	}
	most, err := opt.valueRoom(q, 1)
	if err != nil {
		return nil, err
	}
	fixed := fixedLength(base, q+l.head)
	for i := range values {
		if need := fixed + l.cost(i, i+1); need > budget {
			return nil, &ValueError{Param: param, Value: values[i], Index: i, Need: need, Budget: budget, Err: ErrValueTooLong}
		}
	}

	cuts := pack(l, budget-fixed, most)
	urls := make([]*url.URL, 0, len(cuts))
	start := 0
	for _, end := range cuts {
		var b strings.Builder
		b.Grow(len(q) + len(l.head) + l.cost(start, end))
		b.WriteString(q)
		l.write(&b, start, end)
		u := *base
		u.RawQuery = b.String()
		urls = append(urls, &u)
		start = end
	}
	return urls, nil
}

// pack returns the end index of each chunk when l's values are packed
// greedily into runs whose cost is at most room and that hold at most most
// values (at least 1). Every single value must fit.
//
// Greedy is optimal among splits into contiguous runs in order. A run's cost
// only falls when a value is removed from either end (lengths and joins are
// non-negative), so any run inside a run that fits also fits. Let greedy end
// its runs at g1 < g2 < ... and any other valid split at o1 < o2 < ....
// Greedy's first run is the longest that fits from 0, so g1 >= o1. If
// gk >= ok, the other split's next run (ok, o(k+1)] fits, so the shorter run
// (gk, o(k+1)] fits too, and greedy, taking the longest run that fits from
// gk, ends at g(k+1) >= o(k+1). Greedy is therefore never behind, and
// reaches the end of the list in no more runs than any other split. The
// cap of values per run is a bound of the same kind (a run inside a run
// that holds at most most values holds at most most), so the argument
// holds with both. TestPackIsOptimal checks this against an exhaustive
// search.
func pack(l *list, room, most int) []int {
	n := len(l.enc)
	var cuts []int
	start := 0
	for i := 1; i < n; i++ {
		if l.cost(start, i+1) > room || i+1-start > most {
			cuts = append(cuts, i)
			start = i
		}
	}
	return append(cuts, n)
}

// baseFits reports ErrBaseTooLong when base alone exceeds the budget.
func baseFits(base *url.URL, budget int) error {
	if n := len(base.String()); n > budget {
		return fmt.Errorf("chunk: base URL is %d bytes, over the budget of %d: %w", n, budget, ErrBaseTooLong)
	}
	return nil
}
